\* SPDX-License-Identifier: MIT
-------------------------------- MODULE Help --------------------------------
(***************************************************************************)
(* Protocol H of zap (src/zap/helping_wait.hpp): workers that wait for a   *)
(* WaitGroup help, and sleep, when there is nothing to run, through        *)
(* Protocol A's wait() - but not counted idle - each on its own worker's   *)
(* helper word, which the pool's notify (K1: one sleeping helper, when     *)
(* nobody else can take the notification) and the group's last done()     *)
(* (K2: the group's own waiter) wake.  In the first design every           *)
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
(* Spawning and the idle event are left out (Pool.tla has them): every    *)
(* worker exists from the start and is a helper.                           *)
(*                                                                         *)
(* Shutdown (Shutdown = TRUE; pool_core.hpp B1, helping_wait.hpp H6): once *)
(* it has scheduled and completed everything, the client calls shutdown(): *)
(* one Sync CAS (state shutdown, `notified` set for good, so every notify  *)
(* after it returns at once), then the K3 scan, which wakes every helper   *)
(* whose word has a helping sleeper entered.  A helper's wait() that sees  *)
(* shutdown returns; the helper then searches everything, the global queue *)
(* included, and with nothing found sleeps on its word watching only its   *)
(* count, until a wake or its backoff's timeout (a step always enabled     *)
(* while it sleeps), and searches again (H6).  A helper whose wait has     *)
(* returned is done here as before: its task may block (in the client it   *)
(* may wait for another group), so nothing it would do afterwards - the    *)
(* sweep of B2, join()'s drain - is counted on.  Without K3 ("noshutwake", *)
(* the pool before K3) a helper asleep when the pool shuts down is woken   *)
(* by its count only, and a completer whose notification another helper    *)
(* took before the shutdown and did not pass on stays queued.  Without    *)
(* the timeout ("shutnotimeout"), a task the outside caller put back after *)
(* the shutdown (its notify returns at once) waits beside a helper asleep  *)
(* for the count that task would bring to zero.                            *)
(*                                                                         *)
(* Isolation (isolation.hpp I3-I4, helping_wait.hpp's                      *)
(* help_isolated): the helpers in Isolated wait inside ThreadPool::isolate. *)
(* Such a wait runs only its region's tasks - here its own child (Child:   *)
(* a task the waiter scheduled into its own ring before waiting; any       *)
(* helping wait may steal it) - never the global queue; finding none it    *)
(* arms its group (K2) and sleeps on its word as an isolated sleeper (a    *)
(* bit of its own, hw[h].iso), without going through wait() or touching    *)
(* Sync: it never consumes `notified`, and K1 skips it.  Its sleep ends    *)
(* by K2 or by a timeout (a step always enabled while it sleeps), then it  *)
(* searches again.  Parent: a helper whose group the isolated waiter's     *)
(* task completes after its wait returns (its parent, waiting for it in a  *)
(* helping wait), so that the isolated wait's group, completed by an       *)
(* unrelated task from outside, depends on another helper being woken for  *)
(* that task.  Not modelled: tasks of the region in flight between workers *)
(* (the timeout's reason, I4), the set-aside of I3 and IS2's notify.       *)
(*                                                                         *)
(* The outside caller (outside_wait.hpp, Protocol OC): OTasks, when not    *)
(* empty, are the tasks of a call made from a thread outside the pool      *)
(* (Caller), stamped with its caller region.  It schedules them into the   *)
(* global queue one by one (OC2; schedule(): push, then notify()), then    *)
(* waits for its own group (count |OTasks|) as OC4 says: it takes the      *)
(* whole global queue, keeps one task of its region, puts every other task *)
(* back (OI2) and, if it moved any, notifies (OC4b); it runs the task it   *)
(* kept (the task's done() on its group), or, finding none, sleeps on its  *)
(* group's own word (WaitGroup::wait_for: WAITERS set, then futex_wait if  *)
(* the word is unchanged) until the group's last done() wakes it or its   *)
(* nap ends (a step always enabled while it sleeps).  The helpers may run  *)
(* its tasks too (a helper that owes a notification searches the global    *)
(* queue).  It never takes a notification, and K1 never wakes it.  Not     *)
(* modelled: the overflow queues and rings it searches as well (the same   *)
(* take and put back, under the same lock or claim), the tasks its tasks   *)
(* schedule, and the nap's doubling (only its bound matters here).         *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Helpers,   \* the workers; each waits for its own group
    Work,      \* groups completed by a task the client schedules (others: done())
    Isolated,  \* helpers whose wait is inside isolate() (region: their own)
    Child,     \* groups completed by a child the waiter scheduled before waiting
    Parent,    \* a helper whose group the isolated waiter completes after
               \* its wait returns, or "none"
    OTasks,    \* the tasks of an outside caller's call (Protocol OC), or {}:
               \* no outside caller
    Shutdown,  \* TRUE: the client shuts the pool down once it has scheduled
               \* and completed every group of its
    Mutation   \* "none"; "nok1": notify wakes no helper; "nok2": done()
               \* does not wake its waiter; "norecheck": a helper sleeps
               \* without re-reading its count and Sync after entering its
               \* word; "owesearly": a helper that consumed a notification
               \* stops owing it after any search, even one that found a
               \* task (the first version of H8).
               \* Isolation: "isoconsumes": an isolated waiter about to
               \* sleep consumes a notification meant for it as H4 does (and
               \* owes it as a helping wait does, until a search finds
               \* nothing); "k1iso": K1 may wake an isolated sleeper;
               \* "isonok2": the isolated waiter does not arm its group
               \* (only the timeout ends its sleep); "isonorecheck": it
               \* sleeps without re-reading its count after entering its
               \* word; "isoany": its search takes any task, the global
               \* queue included; "isonotimeout": its sleep has no timeout
               \* (woken by K2 only).
               \* The outside caller: "outany": its search keeps a task of
               \* any region; "outnonotify": it puts the tasks it moved back
               \* without a notify (OC4b left out); "outdrop": it puts back
               \* only the other regions' tasks, and drops the rest of its
               \* own; "outnoarm": it sleeps without setting WAITERS (its nap
               \* alone ends the sleep); "outnowake": neither WAITERS nor
               \* the nap (a sleep nothing ends).
               \* Shutdown: "noshutwake": shutdown() wakes no helper (no K3);
               \* "shutnotimeout": a helper's sleep after shutdown (H6) has
               \* no timeout (woken by its count only)

ASSUME Work \subseteq Helpers /\ Child \subseteq Helpers /\ Work \cap Child = {}
ASSUME Isolated \subseteq Helpers
ASSUME Parent = "none" \/ (Parent \in Helpers \ (Work \cup Child \cup Isolated)
                           /\ Cardinality(Isolated) = 1)
ASSUME Mutation \in {"none", "nok1", "nok2", "norecheck", "owesearly",
                     "isoconsumes", "k1iso", "isonok2", "isonorecheck", "isoany",
                     "isonotimeout", "outany", "outnonotify", "outdrop",
                     "outnoarm", "outnowake", "noshutwake",
                     "shutnotimeout"}
ASSUME Shutdown \in BOOLEAN
ASSUME OTasks \cap Helpers = {}

Client == "client"
Caller == "caller"   \* the outside caller, and its group
Threads == Helpers \cup {Client} \cup (IF OTasks # {} THEN {Caller} ELSE {})
Groups == Helpers \cup {Caller}

\* The group a task completes: a completer's is its name, the caller's tasks'
\* the caller's group.
GroupOf(task) == IF task \in OTasks THEN Caller ELSE task

VARIABLES
    sync,      \* Sync: [idle, notified, state]  (state pending/signaled/waking;
               \* idle stays 0: only idle workers count, and helpers are not)
    hw,        \* hw[h]: helper h's word: [count, iso, epoch] (count: the
               \* helping bit, iso: the isolated one)
    sleepers,  \* helpers blocked in futex_wait on their own word
    cnt,       \* cnt[g]: group g's count
    armed,     \* armed[g]: HELPERS set in g's word (the caller's group: WAITERS)
    queued,    \* tasks in the global queue: completers (as the groups they
               \* complete) and the outside caller's
    ring,      \* ring[h]: children in h's ring (as the groups they complete)
    pc,        \* program counters
    isIdle,    \* isIdle[h]: h announced its sleep (wait()'s is_idle: gave up
               \* the waking role; a helper does not count itself idle)
    waking,    \* waking[h]: h holds the waking role
    owes,      \* owes[h]: h consumed a notification and has not found the queue empty since
    entered,   \* entered[h]: the value of its word h entered with
    nf,        \* notify frame: [waking, ret]
    df,        \* done() frame: [g, wake, ret]
    next,      \* the client's next group
    ofork,     \* the outside caller's tasks it has not scheduled yet
    held,      \* the tasks the outside caller took out of the global queue
               \* and has not put back yet (out of every other search's sight)
    otask,     \* the task of its region it kept, until it runs it, or "none"
    oentered,  \* its group's count when it set WAITERS (the word it sleeps on)
    shut,      \* shut[h]: h's wait() saw the pool shut down (H6)
    unscanned  \* the helpers shutdown()'s K3 scan has not looked at yet

OVars == <<ofork, held, otask, oentered>>
SVars == <<shut, unscanned>>

vars == <<sync, hw, sleepers, cnt, armed, queued, ring, pc, isIdle, waking,
          owes, entered, nf, df, next, ofork, held, otask, oentered, shut,
          unscanned>>

\* The groups the client completes, in its order: the isolated waiters'
\* first (a helper that is done may leave; see Parent).
ClientGroups == Helpers \ (Child \cup {Parent})

Order == CHOOSE f \in [1..Cardinality(ClientGroups) -> ClientGroups] :
             /\ \A i, j \in DOMAIN f : i # j => f[i] # f[j]
             /\ \A i, j \in DOMAIN f : i < j /\ f[j] \in Isolated => f[i] \in Isolated

Init ==
    /\ sync = [idle |-> 0, notified |-> FALSE, state |-> "pending"]
    /\ hw = [h \in Helpers |-> [count |-> 0, iso |-> 0, epoch |-> 0]]
    /\ sleepers = {}
    /\ cnt = [g \in Groups |-> IF g = Caller THEN Cardinality(OTasks) ELSE 1]
    /\ armed = [g \in Groups |-> FALSE]
    /\ queued = {}
    /\ ring = [h \in Helpers |-> {}]
    /\ pc = [t \in Threads |-> CASE t = Client -> "c_next"
                                 [] t = Caller -> "o_fork"
                                 [] t \in Child -> "h_push"
                                 [] OTHER -> "h1"]
    /\ isIdle = [h \in Helpers |-> FALSE]
    /\ waking = [h \in Helpers |-> FALSE]
    /\ owes = [h \in Helpers |-> FALSE]
    /\ entered = [h \in Helpers |-> [count |-> 0, iso |-> 0, epoch |-> 0]]
    /\ nf = [t \in Threads |-> [waking |-> FALSE, ret |-> "none"]]
    /\ df = [t \in Threads |-> [g |-> Client, wake |-> FALSE, ret |-> "none"]]
    /\ next = 1
    /\ ofork = OTasks
    /\ held = {}
    /\ otask = "none"
    /\ oentered = 0
    /\ shut = [h \in Helpers |-> FALSE]
    /\ unscanned = {}

Goto(t, l) == pc' = [pc EXCEPT ![t] = l]

-----------------------------------------------------------------------------
(* notify(is_waking) (pool_core.hpp A2-A3) with K1, as two steps: the      *)
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
    /\ CASE s.state = "shutdown" -> UNCHANGED sync /\ Goto(t, ret)  \* B1: nobody to wake
         [] w -> sync' = [s EXCEPT !.notified = TRUE, !.state = "pending"] /\ Goto(t, "n_k1")
         [] s.notified -> UNCHANGED sync /\ Goto(t, ret)    \* someone is bound to look
         [] OTHER -> sync' = [s EXCEPT !.notified = TRUE]
                     /\ Goto(t, IF canWake THEN "n_k1" ELSE ret)
    /\ IF t \in Helpers THEN waking' = [waking EXCEPT ![t] = FALSE] ELSE UNCHANGED waking
    /\ UNCHANGED <<hw, sleepers, nf>>

\* K1 (after the fence): one helper whose word has a helping sleeper
\* entered gets its word changed and woken; with none entered, nothing.
\* An isolated sleeper (iso bit) is skipped ("k1iso": not).
K1Candidates ==
    {x \in Helpers : hw[x].count > 0 \/ (Mutation = "k1iso" /\ hw[x].iso > 0)}

NK1(t) ==
    /\ pc[t] = "n_k1"
    /\ IF Mutation = "nok1" \/ K1Candidates = {}
         THEN UNCHANGED <<hw, sleepers>>
         ELSE \E h \in K1Candidates :
                /\ hw' = [hw EXCEPT ![h].epoch = @ + 1]
                /\ sleepers' = sleepers \ {h}
    /\ Goto(t, nf[t].ret)
    /\ UNCHANGED <<sync, waking, nf>>

NotifyStep(t) == (NCas(t) \/ NK1(t))
                 /\ UNCHANGED <<cnt, armed, queued, ring, isIdle, owes, entered, df, next>>

(* done() (wait_group.hpp step 2) with K2: the CAS (to zero: swapping      *)
(* HELPERS for WAKING), then the wake of the word its slot names: the      *)
(* waiting helper's own (helper g waits for group g); for the outside      *)
(* caller's group, the group's own word (WAITERS).  A helper's group       *)
(* counts 1, the caller's |OTasks|: only the last done() wakes.            *)

CallDone(t, g, ret) ==
    /\ df' = [df EXCEPT ![t] = [g |-> g, wake |-> FALSE, ret |-> ret]]
    /\ Goto(t, "d_cas")

DCas(t) ==
    LET g == df[t].g  last == cnt[g] = 1 IN
    /\ pc[t] = "d_cas"
    /\ cnt' = [cnt EXCEPT ![g] = @ - 1]
    /\ armed' = [armed EXCEPT ![g] = @ /\ ~last]
    /\ df' = [df EXCEPT ![t].wake = last /\ armed[g]]
    /\ Goto(t, "d_k2")
    /\ UNCHANGED <<hw, sleepers>>

DK2(t) ==
    /\ pc[t] = "d_k2"
    /\ CASE df[t].wake /\ Mutation # "nok2" /\ df[t].g = Caller ->
              /\ sleepers' = sleepers \ {Caller}    \* the group's own word
              /\ UNCHANGED hw
         [] df[t].wake /\ Mutation # "nok2" ->
              /\ hw' = [hw EXCEPT ![df[t].g].epoch = @ + 1]
              /\ sleepers' = sleepers \ {df[t].g}
         [] OTHER -> UNCHANGED <<hw, sleepers>>
    /\ Goto(t, df[t].ret)
    /\ UNCHANGED <<cnt, armed, df>>

DoneStep(t) == (DCas(t) \/ DK2(t))
               /\ UNCHANGED <<sync, queued, ring, isIdle, waking, owes, entered, nf, next>>

-----------------------------------------------------------------------------
(* A helper (helping_wait.hpp help_until_zero, Sleep; pool_core.hpp       *)
(* wait()).                                                                *)

HUnchanged == <<hw, sleepers, cnt, armed, queued, nf, df, next, entered>>

\* A child in h's ring (a task of a thread in a region is stamped with it):
\* schedule(): push, then notify() (no waking role: h is running).
HPush(h) ==
    /\ pc[h] = "h_push"
    /\ ring' = [ring EXCEPT ![h] = {h}]
    /\ CallNotify(h, FALSE, "h1")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, armed, queued,
                   df, next, entered>>

\* H1: the count.
H1(h) ==
    /\ pc[h] = "h1"
    /\ Goto(h, IF cnt[h] = 0 THEN "h_exit" ELSE "h2")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, armed, queued,
                   nf, df, next, entered>>

\* What h's search (H2) may take.  A helping wait: its own ring first, then
\* every other ring (a steal), and the global queue, where the client's
\* completers wait, only while it owes a notification.  An isolated wait
\* (I3): only its region's tasks, here its own child; never the global
\* queue ("isoany": everything a helping wait may take, the global queue
\* included, without owing).
Findable(h) ==
    IF h \in Isolated /\ Mutation # "isoany"
      THEN ring[h]
      ELSE IF ring[h] # {} THEN ring[h]
           ELSE UNION {ring[x] : x \in Helpers}
                \cup (IF owes[h] \/ shut[h] \/ h \in Isolated THEN queued ELSE {})

\* H2: search; a completer found is run (its done() is ours to call).
\* Nothing found: arm (H3), or an armed helping wait goes to wait() (H4),
\* an armed isolated one to its sleep (I4).
H2(h) ==
    LET found == Findable(h) # {} IN
    /\ pc[h] = "h2"
    \* cleared by a search that finds nothing ("owesearly": by any search)
    /\ owes' = [owes EXCEPT ![h] = @ /\ found /\ Mutation # "owesearly"]
    /\ IF found
         THEN \E g \in Findable(h) :
                /\ queued' = queued \ {g}
                /\ ring' = [x \in Helpers |-> ring[x] \ {g}]
                /\ df' = [df EXCEPT ![h].g = g]
                /\ IF waking[h]
                     THEN CallNotify(h, TRUE, "h_run")
                     ELSE Goto(h, "h_run") /\ UNCHANGED nf
         ELSE /\ Goto(h, CASE h \notin Isolated -> IF ~armed[h] THEN "h3"
                                                   ELSE IF shut[h] THEN "h5" ELSE "h4"
                          [] armed[h] \/ Mutation = "isonok2" -> "i_enter"
                          [] OTHER -> "h3")
              /\ UNCHANGED <<queued, ring, nf, df>>
    /\ UNCHANGED <<sync, isIdle, waking, hw, sleepers, cnt, armed, next, entered>>

\* Run the task: its done() on the group it completes.
HRun(h) ==
    /\ pc[h] = "h_run"
    /\ CallDone(h, GroupOf(df[h].g), "h1")
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
    /\ pc[h] = "h4" /\ s.state # "shutdown"
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

\* wait() sees shutdown and returns (A5); the helper acquires Sync and
\* searches everything from now on (H6).
H4Shut(h) ==
    /\ pc[h] = "h4" /\ sync.state = "shutdown"
    /\ shut' = [shut EXCEPT ![h] = TRUE]
    /\ isIdle' = [isIdle EXCEPT ![h] = FALSE]
    /\ Goto(h, "h1")
    /\ UNCHANGED <<sync, waking, owes, unscanned>>
    /\ UNCHANGED HUnchanged

\* H5: enter its own word (count + 1), remembering the value (then the
\* fence that pairs with K1's: implicit in this interleaving model).
H5(h) ==
    /\ pc[h] = "h5"
    /\ hw' = [hw EXCEPT ![h].count = @ + 1]
    /\ entered' = [entered EXCEPT ![h] = [hw[h] EXCEPT !.count = @ + 1]]
    /\ Goto(h, IF Mutation = "norecheck" THEN "h7" ELSE "h6")
    /\ UNCHANGED <<sync, isIdle, waking, owes, sleepers, cnt, armed, queued, nf, df, next>>

\* H5: re-read the count and Sync (a notification for it, or shutdown);
\* after shutdown (H6) the count only.
H6(h) ==
    /\ pc[h] = "h6"
    /\ Goto(h, IF cnt[h] = 0 \/ (~shut[h] /\ (Mine(h) \/ sync.state = "shutdown"))
                THEN "h8" ELSE "h7")
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

\* After shutdown (H6) the sleep also ends at its backoff's timeout (any
\* time; "shutnotimeout": never), and the helper searches again.
H7t(h) ==
    /\ pc[h] = "h7s" /\ h \in sleepers /\ shut[h] /\ Mutation # "shutnotimeout"
    /\ sleepers' = sleepers \ {h}
    /\ Goto(h, "h8")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, cnt, armed, queued, nf, df,
                   next, entered>>

\* Leave its word; back to wait()'s loop, or after shutdown to the search.
H8(h) ==
    /\ pc[h] = "h8"
    /\ hw' = [hw EXCEPT ![h].count = @ - 1]
    /\ Goto(h, IF shut[h] THEN "h1" ELSE "h4")
    /\ UNCHANGED <<sync, isIdle, waking, owes, sleepers, cnt, armed, queued, nf, df,
                   next, entered>>

\* H8: re-post a consumed notification, or hand the waking role on.  An
\* isolated wait owes nothing (it took no notification); with a Parent,
\* its task then completes the parent's group.
HExit(h) ==
    LET ret == IF h \in Isolated /\ Parent \in Helpers THEN "h_then" ELSE "h_done" IN
    /\ pc[h] = "h_exit"
    /\ IF owes[h] \/ waking[h]
         THEN CallNotify(h, waking[h], ret)
         ELSE Goto(h, ret) /\ UNCHANGED nf
    /\ owes' = [owes EXCEPT ![h] = FALSE]
    /\ UNCHANGED <<sync, isIdle, waking, hw, sleepers, cnt, armed, queued, df,
                   next, entered>>

\* The isolated waiter's task, its wait returned, completes its parent's group.
HThen(h) ==
    /\ pc[h] = "h_then"
    /\ CallDone(h, Parent, "h_done")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, armed, queued,
                   nf, next, entered>>

-----------------------------------------------------------------------------
(* An isolated wait's sleep (isolation.hpp I4, help_isolated): no wait(),  *)
(* no Sync, no fence; H1-H3 as above (its search is I3's).                 *)

\* I4: enter its word as an isolated sleeper ("isoconsumes": first take a
\* notification meant for it, as H4 does, and owe it).
IEnter(h) ==
    LET s == sync IN
    /\ pc[h] = "i_enter"
    /\ IF Mutation = "isoconsumes" /\ Mine(h)
         THEN /\ sync' = [s EXCEPT !.notified = FALSE,
                                   !.state = IF @ = "signaled" THEN "waking" ELSE @]
              /\ waking' = [waking EXCEPT ![h] = @ \/ s.state = "signaled"]
              /\ owes' = [owes EXCEPT ![h] = TRUE]
              /\ Goto(h, "h1")
              /\ UNCHANGED <<hw, entered>>
         ELSE /\ hw' = [hw EXCEPT ![h].iso = @ + 1]
              /\ entered' = [entered EXCEPT ![h] = [hw[h] EXCEPT !.iso = @ + 1]]
              /\ Goto(h, IF Mutation = "isonorecheck" THEN "i_sleep" ELSE "i_recheck")
              /\ UNCHANGED <<sync, waking, owes>>
    /\ UNCHANGED <<isIdle, sleepers, cnt, armed, queued, nf, df, next>>

\* `if (!group.zero())`: re-read the count (HW1 for K2).
IRecheck(h) ==
    /\ pc[h] = "i_recheck"
    /\ Goto(h, IF cnt[h] = 0 THEN "i_leave" ELSE "i_sleep")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, armed, queued,
                   nf, df, next, entered>>

\* futex_wait with a timeout: blocks only if the word is unchanged.
ISleep(h) ==
    /\ pc[h] = "i_sleep"
    /\ IF hw[h] = entered[h]
         THEN sleepers' = sleepers \cup {h} /\ Goto(h, "i_slept")
         ELSE Goto(h, "i_leave") /\ UNCHANGED sleepers
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, cnt, armed, queued, nf, df,
                   next, entered>>

\* Back from the futex: woken (K2; K1 under "k1iso") ...
IWoken(h) ==
    /\ pc[h] = "i_slept" /\ h \notin sleepers
    /\ Goto(h, "i_leave")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, sleepers, cnt, armed, queued,
                   nf, df, next, entered>>

\* ... or the timeout ends the sleep (the backoff's pause; any time).
ITimeout(h) ==
    /\ pc[h] = "i_slept" /\ h \in sleepers /\ Mutation # "isonotimeout"
    /\ sleepers' = sleepers \ {h}
    /\ Goto(h, "i_leave")
    /\ UNCHANGED <<sync, isIdle, waking, owes, hw, cnt, armed, queued, nf, df,
                   next, entered>>

\* Leave its word; search again (H1).
ILeave(h) ==
    /\ pc[h] = "i_leave"
    /\ hw' = [hw EXCEPT ![h].iso = @ - 1]
    /\ Goto(h, "h1")
    /\ UNCHANGED <<sync, isIdle, waking, owes, sleepers, cnt, armed, queued, nf, df,
                   next, entered>>

HelperStep(h) ==
    \/ H2(h) \/ HPush(h)    \* the steps that touch the rings
    \/ /\ \/ H1(h) \/ HRun(h) \/ H3(h) \/ H4(h) \/ H5(h) \/ H6(h) \/ H7(h)
          \/ H7s(h) \/ H7t(h) \/ H8(h) \/ HExit(h) \/ HThen(h)
          \/ IEnter(h) \/ IRecheck(h) \/ ISleep(h) \/ IWoken(h) \/ ITimeout(h)
          \/ ILeave(h)
       /\ UNCHANGED ring

-----------------------------------------------------------------------------
(* The client: complete each group in turn.                                *)

CNext ==
    /\ pc[Client] = "c_next"
    /\ IF next > Cardinality(ClientGroups)
         THEN Goto(Client, IF Shutdown THEN "c_shut" ELSE "c_done")
              /\ UNCHANGED <<queued, df, next, nf>>
         ELSE LET g == Order[next] IN
              /\ next' = next + 1
              /\ IF g \in Work
                   THEN /\ queued' = queued \cup {g}   \* schedule(): push, then notify()
                        /\ CallNotify(Client, FALSE, "c_next") /\ UNCHANGED df
                   ELSE CallDone(Client, g, "c_next") /\ UNCHANGED <<queued, nf>>
    /\ UNCHANGED <<sync, hw, sleepers, cnt, armed, ring, isIdle, waking, owes, entered>>

\* shutdown() (B1): the CAS, once the outside caller has scheduled all its
\* tasks (a schedule() from outside must come before shutdown()) ...
CShut ==
    /\ pc[Client] = "c_shut" /\ ofork = {}
    /\ sync' = [sync EXCEPT !.notified = TRUE, !.state = "shutdown"]
    /\ unscanned' = IF Mutation = "noshutwake" THEN {} ELSE Helpers
    /\ Goto(Client, "c_scan")
    /\ UNCHANGED <<hw, sleepers, cnt, armed, queued, ring, isIdle, waking, owes,
                   entered, nf, df, next, shut>>

\* ... then, after its fence, K3: one slot at a time, a helper whose word
\* has a helping sleeper entered gets its word changed and woken.
CScan ==
    /\ pc[Client] = "c_scan"
    /\ IF unscanned = {}
         THEN Goto(Client, "c_done") /\ UNCHANGED <<hw, sleepers, unscanned>>
         ELSE \E x \in unscanned :
                /\ unscanned' = unscanned \ {x}
                /\ IF hw[x].count > 0
                     THEN /\ hw' = [hw EXCEPT ![x].epoch = @ + 1]
                          /\ sleepers' = sleepers \ {x}
                     ELSE UNCHANGED <<hw, sleepers>>
                /\ UNCHANGED pc
    /\ UNCHANGED <<sync, cnt, armed, queued, ring, isIdle, waking, owes, entered,
                   nf, df, next, shut>>

-----------------------------------------------------------------------------
(* The outside caller (outside_wait.hpp OC2, OC4; Protocol OC).            *)

OUnchanged == <<sync, hw, isIdle, waking, owes, entered, next, ring>>

\* OC2: schedule one of its tasks from outside (global queue, then notify()).
OFork ==
    /\ pc[Caller] = "o_fork"
    /\ IF ofork = {}
         THEN Goto(Caller, "o_wait") /\ UNCHANGED <<queued, ofork, nf>>
         ELSE \E o \in ofork :
                /\ queued' = queued \cup {o}
                /\ ofork' = ofork \ {o}
                /\ CallNotify(Caller, FALSE, "o_fork")
    /\ UNCHANGED <<df, sleepers, cnt, armed, held, otask, oentered>>

\* OC4: `while (!group.zero())`.
OWait ==
    /\ pc[Caller] = "o_wait"
    /\ Goto(Caller, IF cnt[Caller] = 0 THEN "o_done" ELSE "o_search")
    /\ UNCHANGED <<df, sleepers, cnt, armed, queued, nf, ofork, held, otask, oentered>>

\* OC4a: the global queue, popped under its consumer lock up to a task of
\* its region, which is kept ("outany": of any region); the tasks popped
\* before it are held until they are put back, the ones after it (`stay`,
\* any subset: the spec has no order) never leave the queue. Found none:
\* every task was popped and is held.
OSearch ==
    LET mine == IF Mutation = "outany" THEN queued ELSE queued \cap OTasks IN
    /\ pc[Caller] = "o_search"
    /\ IF mine = {}
         THEN held' = queued /\ queued' = {} /\ UNCHANGED otask
         ELSE \E o \in mine : \E stay \in SUBSET (queued \ {o}) :
                /\ otask' = o
                /\ queued' = stay
                \* "outdrop": the rest of its own tasks are not put back
                /\ held' = IF Mutation = "outdrop" THEN (queued \ mine) \ stay
                                                    ELSE (queued \ {o}) \ stay
    /\ Goto(Caller, "o_back")
    /\ UNCHANGED <<df, sleepers, cnt, armed, nf, ofork, oentered>>

\* OC4a-b: put back what it moved (OI2), and announce it ("outnonotify": not).
OBack ==
    LET then == IF otask # "none" THEN "o_run" ELSE "o_arm" IN
    /\ pc[Caller] = "o_back"
    /\ queued' = queued \cup held
    /\ held' = {}
    /\ IF held # {} /\ Mutation # "outnonotify"
         THEN CallNotify(Caller, FALSE, then)
         ELSE Goto(Caller, then) /\ UNCHANGED nf
    /\ UNCHANGED <<df, sleepers, cnt, armed, ofork, otask, oentered>>

\* OC4c: run the task it kept: its done().
ORun ==
    /\ pc[Caller] = "o_run"
    /\ otask' = "none"
    /\ CallDone(Caller, GroupOf(otask), "o_wait")
    /\ UNCHANGED <<sleepers, cnt, armed, queued, nf, ofork, held, oentered>>

\* OC4d: WaitGroup::wait_for - set WAITERS unless the count is zero
\* ("outnoarm", "outnowake": not set), remembering the word.
OArm ==
    /\ pc[Caller] = "o_arm"
    /\ IF cnt[Caller] = 0
         THEN Goto(Caller, "o_wait") /\ UNCHANGED <<armed, oentered>>
         ELSE /\ armed' = [armed EXCEPT ![Caller] = @ \/ Mutation \notin {"outnoarm", "outnowake"}]
              /\ oentered' = cnt[Caller]
              /\ Goto(Caller, "o_sleep")
    /\ UNCHANGED <<df, sleepers, cnt, queued, nf, ofork, held, otask>>

\* futex_wait(the group's word, the value entered) for one nap: blocks only
\* if the word is unchanged (a done() since changed its count).
OSleep ==
    /\ pc[Caller] = "o_sleep"
    /\ IF cnt[Caller] = oentered
         THEN sleepers' = sleepers \cup {Caller} /\ Goto(Caller, "o_slept")
         ELSE Goto(Caller, "o_wait") /\ UNCHANGED sleepers
    /\ UNCHANGED <<df, cnt, armed, queued, nf, ofork, held, otask, oentered>>

\* Back from the futex: woken by the last done() ...
OWoken ==
    /\ pc[Caller] = "o_slept" /\ Caller \notin sleepers
    /\ Goto(Caller, "o_wait")
    /\ UNCHANGED <<df, sleepers, cnt, armed, queued, nf, ofork, held, otask, oentered>>

\* ... or the nap ends (any time; "outnowake": never).
ONap ==
    /\ pc[Caller] = "o_slept" /\ Caller \in sleepers /\ Mutation # "outnowake"
    /\ sleepers' = sleepers \ {Caller}
    /\ Goto(Caller, "o_wait")
    /\ UNCHANGED <<df, cnt, armed, queued, nf, ofork, held, otask, oentered>>

CallerStep ==
    /\ \/ OFork \/ OWait \/ OSearch \/ OBack \/ ORun \/ OArm \/ OSleep \/ OWoken \/ ONap
    /\ UNCHANGED OUnchanged

Step(t) ==
    \/ /\ \/ NotifyStep(t)
          \/ DoneStep(t)
          \/ t \in Helpers /\ HelperStep(t)
          \/ t = Client /\ CNext
       /\ UNCHANGED OVars
       /\ UNCHANGED SVars
    \/ t = Caller /\ CallerStep /\ UNCHANGED SVars
    \/ t \in Helpers /\ H4Shut(t) /\ UNCHANGED <<ring, OVars>>
    \/ t = Client /\ (CShut \/ CScan) /\ UNCHANGED OVars

Finished == \A t \in Threads : pc[t] \in {"h_done", "c_done", "o_done"}

Next == (\E t \in Threads : Step(t)) \/ (Finished /\ UNCHANGED vars)

Spec == Init /\ [][Next]_vars /\ \A t \in Threads : WF_vars(Step(t))

-----------------------------------------------------------------------------
TypeOK ==
    /\ sync.idle \in 0..Cardinality(Helpers) /\ sync.notified \in BOOLEAN
    /\ sync.state \in {"pending", "signaled", "waking", "shutdown"}
    /\ \A h \in Helpers : hw[h].count \in 0..1
    /\ sync.idle = 0
    /\ sleepers \subseteq Helpers \cup {Caller}
    /\ queued \cup held \subseteq Work \cup OTasks
    /\ cnt[Caller] \in 0..Cardinality(OTasks)
    /\ otask \in OTasks \cup Work \cup {"none"}
    \* one wait of a worker sleeps, of its kind: helping or isolated
    /\ \A h \in Helpers : hw[h].iso \in 0..1 /\ hw[h].count + hw[h].iso <= 1
    /\ \A h \in Isolated : hw[h].count = 0
    /\ \A h \in Helpers \ Isolated : hw[h].iso = 0
    /\ \A h \in Helpers : ring[h] \subseteq ({h} \cap Child)

\* At most one waking helper, and only while the state says so (P1; a
\* helper that held the role when the pool shut down keeps it, unused).
OneWaking ==
    /\ Cardinality({h \in Helpers : waking[h]}) <= 1
    /\ \A h \in Helpers : waking[h] => sync.state \in {"waking", "shutdown"}

\* A helper returns only once its group is done; so does the outside caller.
ReturnsDone == /\ \A h \in Helpers : pc[h] = "h_done" => cnt[h] = 0
               /\ \A t \in Threads : pc[t] = "o_done" => cnt[Caller] = 0

\* Every helper's wait returns, and the outside caller's (OI3; a lost
\* wake-up also shows as a deadlock).  Every task is some group's, so this also
\* says every task runs.
AllReturn == <>(\A t \in Threads \ {Client} : pc[t] \in {"h_done", "o_done"})

\* Woken, not polled: a waiter asleep on its word while its count is zero
\* is one whose K2 is on its way (the last done() between its CAS and its
\* wake).  (HW1: a timeout is not what ends a wait at zero.)
NoSleepAtZero ==
    \A h \in Helpers \cup {Caller} : h \in sleepers /\ cnt[h] = 0 =>
        \E t \in Threads : pc[t] = "d_k2" /\ df[t].g = h

\* I4: an isolated waiter never takes a notification (nor the waking role,
\* nor announces itself as wait() does).
IsoNeverConsumes ==
    \A h \in Isolated : ~owes[h] /\ ~waking[h] /\ ~isIdle[h]

\* IS1: an isolated wait runs only its region's tasks: its own child (the
\* client's completers are from outside the pool, region 0).
IsoRunsOwnRegion ==
    \A h \in Isolated : pc[h] = "h_run" => df[h].g = h /\ h \in Child
\* OI1: the outside caller runs only tasks of its own call.
OutsideRunsOwnRegion == pc[Caller] = "o_run" => otask \in OTasks

\* OI2: no task of the caller's call is lost or run twice: each one not yet
\* done is in exactly one place - not scheduled yet, in the global queue,
\* held by the caller's search, kept by it, or taken by a helper - or its
\* done() is under way (its count not yet lowered).
Places == <<ofork, queued \cap OTasks, held \cap OTasks, {otask} \cap OTasks,
            {df[h].g : h \in Helpers} \cap OTasks>>
NoTaskLost ==
    /\ \A i, j \in DOMAIN Places : i < j => Places[i] \cap Places[j] = {}
    /\ \A h, x \in Helpers : h # x /\ df[h].g \in OTasks => df[h].g # df[x].g
    /\ cnt[Caller] = Cardinality(UNION {Places[i] : i \in DOMAIN Places})
                     + Cardinality({t \in Threads : pc[t] = "d_cas" /\ df[t].g = Caller})
=============================================================================
