-------------------------------- MODULE Help --------------------------------
(***************************************************************************)
(* Protocol H of zap (src/zap/helping_wait.hpp): workers that wait for a   *)
(* WaitGroup help, and sleep, when there is nothing to run, through        *)
(* Protocol A's wait() - but not counted idle - each on its own worker's   *)
(* helper word, which the pool's notify (K1: one sleeping helper, when     *)
(* nobody else can take the notification) and the group's last done()     *)
(* (K2: the group's own waiter) wake.  Since issue 20; before, every       *)
(* helper slept on one pool-wide word, counted idle, and K1 and K2 woke    *)
(* them all.                                                               *)
(*                                                                         *)
(* Every worker of the pool is a helper: helper h waits for its own group  *)
(* g = h (count 1).  The client completes each group in turn: for h in     *)
(* Work by scheduling a completer task from outside the pool (any helper   *)
(* may run it; a helper looks at the global queue only while it owes a     *)
(* notification), for the others by calling done() itself.  This is the   *)
(* hard case for wake-ups: no worker is awake to look at the queue unless  *)
(* a helper is woken, and nobody is idle or can be spawned, so K1 must     *)
(* wake one.                                                               *)
(*                                                                         *)
(* Granularity as in Pool.tla: a CAS loop is one step; a wake is "change   *)
(* the word" then "futex_wake"; a sleep is "futex_wait, if the word still  *)
(* holds the value entered".  Interleaving (sequentially consistent)       *)
(* semantics: the model checks the algorithm, Relacy the memory orders.    *)
(* No spurious wake-ups: a helper asleep through its wake stays asleep,    *)
(* and with everyone else finished that is a deadlock TLC reports.         *)
(* Shutdown, spawning and the idle event are left out (Pool.tla has them): *)
(* every worker exists from the start and is a helper.                     *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Helpers,   \* the workers; each waits for its own group
    Work,      \* groups completed by a task the client schedules (others: done())
    Mutation   \* "none"; "nok1": notify wakes no helper; "nok2": done()
               \* does not wake its waiter; "norecheck": a helper sleeps
               \* without re-reading its count and Sync after entering its
               \* word; "owesearly": a helper that consumed a notification
               \* stops owing it after any search, even one that found a
               \* task (the first version of H8)

ASSUME Work \subseteq Helpers
ASSUME Mutation \in {"none", "nok1", "nok2", "norecheck", "owesearly"}

Client == "client"
Threads == Helpers \cup {Client}

VARIABLES
    sync,      \* Sync: [idle, notified, state]  (state pending/signaled/waking;
               \* idle stays 0: only idle workers count, and helpers are not)
    hw,        \* hw[h]: helper h's word: [count, epoch]
    sleepers,  \* helpers blocked in futex_wait on their own word
    cnt,       \* cnt[g]: group g's count
    armed,     \* armed[g]: HELPERS set in g's word
    queued,    \* completer tasks in the pool's queues (as the groups they complete)
    pc,        \* program counters
    isIdle,    \* isIdle[h]: h announced its sleep (wait()'s is_idle: gave up
               \* the waking role; a helper does not count itself idle)
    waking,    \* waking[h]: h holds the waking role
    owes,      \* owes[h]: h consumed a notification and has not found the queue empty since
    entered,   \* entered[h]: the value of its word h entered with
    nf,        \* notify frame: [waking, ret]
    df,        \* done() frame: [g, wake, ret]
    next       \* the client's next group

vars == <<sync, hw, sleepers, cnt, armed, queued, pc, isIdle, waking, owes,
          entered, nf, df, next>>

Order == CHOOSE f \in [1..Cardinality(Helpers) -> Helpers] :
             \A i, j \in DOMAIN f : i # j => f[i] # f[j]

Init ==
    /\ sync = [idle |-> 0, notified |-> FALSE, state |-> "pending"]
    /\ hw = [h \in Helpers |-> [count |-> 0, epoch |-> 0]]
    /\ sleepers = {}
    /\ cnt = [g \in Helpers |-> 1]
    /\ armed = [g \in Helpers |-> FALSE]
    /\ queued = {}
    /\ pc = [t \in Threads |-> IF t = Client THEN "c_next" ELSE "h1"]
    /\ isIdle = [h \in Helpers |-> FALSE]
    /\ waking = [h \in Helpers |-> FALSE]
    /\ owes = [h \in Helpers |-> FALSE]
    /\ entered = [h \in Helpers |-> [count |-> 0, epoch |-> 0]]
    /\ nf = [t \in Threads |-> [waking |-> FALSE, ret |-> "none"]]
    /\ df = [t \in Threads |-> [g |-> Client, wake |-> FALSE, ret |-> "none"]]
    /\ next = 1

Goto(t, l) == pc' = [pc EXCEPT ![t] = l]

-----------------------------------------------------------------------------
(* notify(is_waking) (thread_pool.hpp A2-A3) with K1, as two steps: the    *)
(* Sync CAS (fast path folded in), then the wake of one sleeping helper.   *)
(* With no idle worker and no spawn (every worker is a helper here), the   *)
(* CAS only sets `notified` (and a waker gives its role up); K1 follows    *)
(* when nobody else is bound to look (state pending, or the waker itself). *)

CallNotify(t, w, ret) ==
    /\ nf' = [nf EXCEPT ![t] = [waking |-> w, ret |-> ret]]
    /\ Goto(t, "n_cas")

NCas(t) ==
    LET s == sync  w == nf[t].waking
        canWake == w \/ s.state = "pending"
        ret == nf[t].ret
    IN
    /\ pc[t] = "n_cas"
    /\ CASE w -> sync' = [s EXCEPT !.notified = TRUE, !.state = "pending"] /\ Goto(t, "n_k1")
         [] s.notified -> UNCHANGED sync /\ Goto(t, ret)    \* someone is bound to look
         [] OTHER -> sync' = [s EXCEPT !.notified = TRUE]
                     /\ Goto(t, IF canWake THEN "n_k1" ELSE ret)
    /\ IF t \in Helpers THEN waking' = [waking EXCEPT ![t] = FALSE] ELSE UNCHANGED waking
    /\ UNCHANGED <<hw, sleepers, nf>>

\* K1 (after the fence): one helper whose word has a sleeper entered gets
\* its word changed and woken; with none entered, nothing.
NK1(t) ==
    /\ pc[t] = "n_k1"
    /\ IF Mutation = "nok1" \/ \A h \in Helpers : hw[h].count = 0
         THEN UNCHANGED <<hw, sleepers>>
         ELSE \E h \in {x \in Helpers : hw[x].count > 0} :
                /\ hw' = [hw EXCEPT ![h].epoch = @ + 1]
                /\ sleepers' = sleepers \ {h}
    /\ Goto(t, nf[t].ret)
    /\ UNCHANGED <<sync, waking, nf>>

NotifyStep(t) == (NCas(t) \/ NK1(t))
                 /\ UNCHANGED <<cnt, armed, queued, isIdle, owes, entered, df, next>>

(* done() (wait_group.hpp step 2) with K2: the CAS to zero (swapping       *)
(* HELPERS for WAKING), then the wake of the word its slot names: the      *)
(* waiting helper's own (helper g waits for group g).                      *)

CallDone(t, g, ret) ==
    /\ df' = [df EXCEPT ![t] = [g |-> g, wake |-> FALSE, ret |-> ret]]
    /\ Goto(t, "d_cas")

DCas(t) ==
    LET g == df[t].g IN
    /\ pc[t] = "d_cas"
    /\ cnt' = [cnt EXCEPT ![g] = 0]
    /\ armed' = [armed EXCEPT ![g] = FALSE]
    /\ df' = [df EXCEPT ![t].wake = armed[g]]
    /\ Goto(t, "d_k2")
    /\ UNCHANGED <<hw, sleepers>>

DK2(t) ==
    /\ pc[t] = "d_k2"
    /\ IF df[t].wake /\ Mutation # "nok2"
         THEN /\ hw' = [hw EXCEPT ![df[t].g].epoch = @ + 1]
              /\ sleepers' = sleepers \ {df[t].g}
         ELSE UNCHANGED <<hw, sleepers>>
    /\ Goto(t, df[t].ret)
    /\ UNCHANGED <<cnt, armed, df>>

DoneStep(t) == (DCas(t) \/ DK2(t))
               /\ UNCHANGED <<sync, queued, isIdle, waking, owes, entered, nf, next>>

-----------------------------------------------------------------------------
(* A helper (helping_wait.hpp help_until_zero, Sleep; thread_pool.hpp     *)
(* wait()).                                                                *)

HUnchanged == <<hw, sleepers, cnt, armed, queued, nf, df, next, entered>>

\* H1: the count.
H1(h) ==
    /\ pc[h] = "h1"
    /\ Goto(h, IF cnt[h] = 0 THEN "h_exit" ELSE "h2")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, armed, queued,
                   nf, df, next, entered>>

\* H2: search; a completer found is run (its done() is ours to call). The
\* completers wait in the global queue, which a helper searches only while
\* it owes a notification.
H2(h) ==
    LET found == owes[h] /\ queued # {} IN
    /\ pc[h] = "h2"
    \* cleared by a search that finds nothing ("owesearly": by any search)
    /\ owes' = [owes EXCEPT ![h] = found /\ Mutation # "owesearly"]
    /\ IF found
         THEN \E g \in queued :
                /\ queued' = queued \ {g}
                /\ df' = [df EXCEPT ![h].g = g]
                /\ IF waking[h]
                     THEN CallNotify(h, TRUE, "h_run")
                     ELSE Goto(h, "h_run") /\ UNCHANGED nf
         ELSE Goto(h, IF armed[h] THEN "h4" ELSE "h3") /\ UNCHANGED <<queued, nf, df>>
    /\ UNCHANGED <<sync, isIdle, waking, hw, sleepers, cnt, armed, next, entered>>

\* Run the completer: its done().
HRun(h) ==
    /\ pc[h] = "h_run"
    /\ CallDone(h, df[h].g, "h1")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, armed, queued,
                   nf, next, entered>>

\* H3: arm the group (unless its count is zero).
H3(h) ==
    /\ pc[h] = "h3"
    /\ armed' = [armed EXCEPT ![h] = cnt[h] # 0]
    /\ Goto(h, "h1")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, queued, nf, df,
                   next, entered>>

\* For helper h: a notification nobody else is bound to look for (H4).
Mine(h) == sync.notified /\ (sync.state = "pending" \/ waking[h])

\* H4: one turn of wait() (A5) on a fresh Sync; a helper is never counted idle.
H4(h) ==
    LET s == sync IN
    /\ pc[h] = "h4"
    /\ CASE Mine(h) ->
              /\ sync' = [s EXCEPT !.notified = FALSE,
                                   !.state = IF @ = "signaled" THEN "waking" ELSE @]
              /\ waking' = [waking EXCEPT ![h] = @ \/ s.state = "signaled"]
              /\ isIdle' = [isIdle EXCEPT ![h] = FALSE]
              /\ owes' = [owes EXCEPT ![h] = TRUE]
              /\ Goto(h, "h1")
         [] cnt[h] = 0 ->
              /\ isIdle' = [isIdle EXCEPT ![h] = FALSE]
              /\ Goto(h, "h1") /\ UNCHANGED <<sync, waking, owes>>
         [] ~isIdle[h] ->   \* announce: a waking helper gives the role up
              /\ sync' = [s EXCEPT !.state = IF waking[h] THEN "pending" ELSE @]
              /\ waking' = [waking EXCEPT ![h] = FALSE]
              /\ isIdle' = [isIdle EXCEPT ![h] = TRUE]
              /\ UNCHANGED <<pc, owes>>
         [] OTHER -> Goto(h, "h5") /\ UNCHANGED <<sync, waking, isIdle, owes>>
    /\ UNCHANGED HUnchanged

\* H5: enter its own word (count + 1), remembering the value (then the
\* fence that pairs with K1's: implicit in this interleaving model).
H5(h) ==
    /\ pc[h] = "h5"
    /\ hw' = [hw EXCEPT ![h].count = @ + 1]
    /\ entered' = [entered EXCEPT ![h] = [hw[h] EXCEPT !.count = @ + 1]]
    /\ Goto(h, IF Mutation = "norecheck" THEN "h7" ELSE "h6")
    /\ UNCHANGED <<sync, isIdle, waking, owes, sleepers, cnt, armed, queued, nf, df, next>>

\* H5: re-read the count and Sync.
H6(h) ==
    /\ pc[h] = "h6"
    /\ Goto(h, IF cnt[h] = 0 \/ Mine(h) THEN "h8" ELSE "h7")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, armed, queued,
                   nf, df, next, entered>>

\* futex_wait(its word, entered): blocks only if the word is unchanged.
H7(h) ==
    /\ pc[h] = "h7"
    /\ IF hw[h] = entered[h]
         THEN sleepers' = sleepers \cup {h} /\ Goto(h, "h7s")
         ELSE Goto(h, "h8") /\ UNCHANGED sleepers
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, cnt, armed, queued, nf, df,
                   next, entered>>

\* Back from the futex (a wake took us off the queue).
H7s(h) ==
    /\ pc[h] = "h7s" /\ h \notin sleepers
    /\ Goto(h, "h8")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, armed, queued,
                   nf, df, next, entered>>

\* Leave its word; back to wait()'s loop.
H8(h) ==
    /\ pc[h] = "h8"
    /\ hw' = [hw EXCEPT ![h].count = @ - 1]
    /\ Goto(h, "h4")
    /\ UNCHANGED <<sync, isIdle, waking, owes, sleepers, cnt, armed, queued, nf, df,
                   next, entered>>

\* H8: re-post a consumed notification, or hand the waking role on.
HExit(h) ==
    /\ pc[h] = "h_exit"
    /\ IF owes[h] \/ waking[h]
         THEN CallNotify(h, waking[h], "h_done")
         ELSE Goto(h, "h_done") /\ UNCHANGED nf
    /\ owes' = [owes EXCEPT ![h] = FALSE]
    /\ UNCHANGED <<sync, isIdle, waking, hw, sleepers, cnt, armed, queued, df,
                   next, entered>>

HelperStep(h) ==
    \/ H1(h) \/ H2(h) \/ HRun(h) \/ H3(h) \/ H4(h) \/ H5(h) \/ H6(h) \/ H7(h)
    \/ H7s(h) \/ H8(h) \/ HExit(h)

-----------------------------------------------------------------------------
(* The client: complete each group in turn.                                *)

CNext ==
    /\ pc[Client] = "c_next"
    /\ IF next > Cardinality(Helpers)
         THEN Goto(Client, "c_done") /\ UNCHANGED <<queued, df, next, nf>>
         ELSE LET g == Order[next] IN
              /\ next' = next + 1
              /\ IF g \in Work
                   THEN /\ queued' = queued \cup {g}   \* schedule(): push, then notify()
                        /\ CallNotify(Client, FALSE, "c_next") /\ UNCHANGED df
                   ELSE CallDone(Client, g, "c_next") /\ UNCHANGED <<queued, nf>>
    /\ UNCHANGED <<sync, hw, sleepers, cnt, armed, isIdle, waking, owes, entered>>

Step(t) ==
    \/ NotifyStep(t)
    \/ DoneStep(t)
    \/ t \in Helpers /\ HelperStep(t)
    \/ t = Client /\ CNext

Finished == \A t \in Threads : pc[t] \in {"h_done", "c_done"}

Next == (\E t \in Threads : Step(t)) \/ (Finished /\ UNCHANGED vars)

Spec == Init /\ [][Next]_vars /\ \A t \in Threads : WF_vars(Step(t))

-----------------------------------------------------------------------------
TypeOK ==
    /\ sync.idle \in 0..Cardinality(Helpers) /\ sync.notified \in BOOLEAN
    /\ sync.state \in {"pending", "signaled", "waking"}
    /\ \A h \in Helpers : hw[h].count \in 0..1
    /\ sync.idle = 0
    /\ sleepers \subseteq Helpers
    /\ queued \subseteq Work

\* At most one waking helper, and only while the state says so (P1).
OneWaking ==
    /\ Cardinality({h \in Helpers : waking[h]}) <= 1
    /\ \A h \in Helpers : waking[h] => sync.state = "waking"

\* A helper returns only once its group is done.
ReturnsDone == \A h \in Helpers : pc[h] = "h_done" => cnt[h] = 0

\* Every helper's wait returns (a lost wake-up also shows as a deadlock).
AllReturn == <>(\A h \in Helpers : pc[h] = "h_done")
=============================================================================
