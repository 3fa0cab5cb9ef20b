\* SPDX-License-Identifier: MIT
-------------------------------- MODULE Pool --------------------------------
(***************************************************************************)
(* The sleep/wake/shutdown/join protocol of the zap thread pool.           *)
(*                                                                         *)
(* One module describes two protocols, chosen by the constant Seed:        *)
(*   Seed = FALSE  the protocol of the C++ port (src/zap/pool_core.hpp);   *)
(*   Seed = TRUE   the protocol of the Zig original the port started from  *)
(*                 (failed spawn only gives back its reservation, workers  *)
(*                 leave at once on shutdown, join() drains nothing, the   *)
(*                 threads are detached and released through a chain of    *)
(*                 per-thread join events, Event.wake overwrites SHUTDOWN).*)
(*                                                                         *)
(* Granularity.  Every compare-and-swap loop on an atomic word is one      *)
(* atomic action: a CAS that fails only reloads the word and retries, so   *)
(* only the successful iteration changes anything, and it reads and writes *)
(* the word in one indivisible step.  Loads that decide something on their *)
(* own (notify's fast path, join's first check) are separate actions.      *)
(* A wake (swap/CAS of the event word, then futex_wake) is two actions, as *)
(* is a wait (CAS to WAITING, then futex_wait): the windows between them   *)
(* are where the interesting races live.                                   *)
(*                                                                         *)
(* Tasks are abstracted to counters: the queues of the pool become one     *)
(* bag of `queued` tasks that any worker may take (work stealing makes     *)
(* every queued task reachable by every worker); a pop is exact (never     *)
(* spuriously empty).  Idle tasks (drainIdleEvents) are not modelled.      *)
(*                                                                         *)
(* Procedures (notify, Event.wait, Event.wake) are modelled with one       *)
(* frame per thread and per procedure kind, holding the arguments and the  *)
(* return label; a frame is reset to its default on return so that states  *)
(* differing only in dead locals are not told apart.                       *)
(*                                                                         *)
(* Clients.  With Joiners = {} the one client thread Main schedules,       *)
(* shuts down and joins in sequence, and frees the pool when join()        *)
(* returns.  With Joiners # {} (Apart) Main schedules and shuts down, and  *)
(* every thread of Joiners calls join(); the pool is freed as soon as the  *)
(* last of them has returned (a caller may free it only once every join()  *)
(* call has returned).  Each thread of Warmers calls warm(1) once, racing  *)
(* shutdown() (its spawn may fail after shutdown).                         *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    Workers,      \* worker slots; |Workers| is max_threads
    Main,         \* the client thread: schedule^NTasks; shutdown; join
                  \* (with Joiners # {}: schedule^NTasks; shutdown)
    Joiners,      \* {} or threads that each call join() (shutdown and join
                  \* apart); the pool is freed when the last one returns
    Warmers,      \* threads that each call warm(1) once
    NTasks,       \* number of tasks the client schedules (one schedule each)
    Fanout,       \* children the first task to run schedules from inside
                  \* the pool (one schedule each), before it returns
    MaxFail,      \* how many OS thread spawns may fail in one behaviour
    DoShutdown,   \* FALSE: the client never shuts down (to isolate liveness)
    Seed,         \* TRUE: the seed protocol; FALSE: the fixed one
    Mutation,     \* "none", or a deliberately broken variant of the fixed
                  \* protocol (each shows that some property can fail):
                  \*   "rerun"   re-run notify after a failed spawn even when
                  \*             no worker is left;
                  \*   "wakeany" wait() hands the waking role to whoever
                  \*             consumes a notification;
                  \*   "nocap"   notify spawns without checking max_threads;
                  \*   "nowake"  notify marks a worker signaled but does not
                  \*             call idle_event.notify();
                  \*   "dup"     the post-shutdown sweep runs a task without
                  \*             taking it off its queue (a pop that does not
                  \*             remove, so the task can run twice)
                  \*   "before9" the port before closers and the join claim: shutdown() and
                  \*             spawn_failed() make their event calls
                  \*             without holding a closer, join() does not
                  \*             wait for closers and claims nothing (its
                  \*             check of joined_ is a plain read)
                  \*   "failopen" the closers-and-claim fix except that a failed
                  \*             spawn (spawn_failed(), warm()'s undo)
                  \*             takes no closer
                  \*   "warmreload" the closers-and-claim fix except that warm()
                  \*             reloads Sync after a successful spawn (as
                  \*             before9 does)
                  \*   "warmrerun" the closers-and-claim fix except that a failed
                  \*             spawn of warm() is undone by spawn_failed()
                  \*             (signaled undone, notify_slow re-run when a
                  \*             worker is left; as before9 does)
                  \*   "closerleak" shutdown() never gives its closer back
                  \*             (join() must then hang, not pass: the
                  \*             spin is not made to progress by fairness)
                  \*   "handover" the rule before the waker's give-back: a waking worker
                  \*             always hands its role on after its first
                  \*             task (A4), even when it moved no extra
                  \*             task and no push came during its search;
                  \*             not broken, only wasteful: it starts a
                  \*             worker for nothing (SpawnsWithinTasks)
                  \*   "before19" the rule before the work-conservation look: only a waking
                  \*             worker, or one whose search moved extra
                  \*             tasks, calls notify before running what it
                  \*             found; a worker that consumed a
                  \*             notification and left work behind does not
                  \*             (WorkConserving)
                  \*   "spinkeep" (with Spin) a worker whose spin ran out
                  \*             counts itself idle and sleeps without
                  \*             giving the waking role back: the state
                  \*             stays waking with no waker, and no notify
                  \*             wakes anyone again
                  \*   "refuse"  (with StealDelay) a thief that finds a
                  \*             ring holding one task passes it over at
                  \*             once instead of leaving it alone for a
                  \*             while and then claiming it (a refusal, not
                  \*             a delay: model/seed/steal-refuses-lone.patch)
    WakeAllOnShutdown, \* Event.shutdown() calls futex_wake(all) whatever the
                      \* old word was (see EvSwap); FALSE: only if it was WAITING
    Spin,             \* the spin: a worker out of work first spins holding the
                      \* waking role (A5's spin); FALSE: it sleeps at once
    StealDelay        \* the lone-task delay (buffer.hpp step 3a): the search
                      \* looks at the rings one by one, and a thief that finds
                      \* a ring holding one task leaves it to its owner for a
                      \* while, then claims it if it is still there; FALSE:
                      \* the bag of tasks and the exact pop of the rest of
                      \* this module (the ring variables stay at their start)

ASSUME Main \notin Workers \cup Joiners \cup Warmers
ASSUME Workers \cap (Joiners \cup Warmers) = {} /\ Joiners \cap Warmers = {}
ASSUME NTasks \in Nat /\ MaxFail \in Nat /\ Fanout \in Nat
ASSUME DoShutdown \in BOOLEAN /\ Seed \in BOOLEAN /\ WakeAllOnShutdown \in BOOLEAN
ASSUME Spin \in BOOLEAN /\ StealDelay \in BOOLEAN
ASSUME Mutation \in {"none", "rerun", "wakeany", "nocap", "nowake", "dup",
                     "before9", "failopen", "warmreload", "warmrerun",
                     "closerleak", "handover", "before19", "spinkeep",
                     "refuse"}
ASSUME StealDelay => Mutation \notin {"dup", "before19"}
ASSUME Joiners # {} => DoShutdown /\ ~Seed
ASSUME Warmers # {} => ~Seed

Apart    == Joiners # {}           \* shutdown() and join() on other threads
Clients  == {Main} \cup Joiners \cup Warmers
Threads  == Workers \cup Clients
JoinThreads == IF Apart THEN Joiners ELSE {Main}
MaxThreads == Cardinality(Workers)
\* Every task that can ever be scheduled: the client's and the children.
AllTasks == NTasks + Fanout

\* The closers-and-claim fix (closers in Sync, join() claimed, warm() touching
\* the pool only while it holds a reservation or a closer): in the port,
\* not in the seed nor in the port before closers and the join claim.
Closers == ~Seed /\ Mutation # "before9"
\* A failed spawn's undo that takes spawned to 0 after shutdown takes one.
FailCloser == Closers /\ Mutation # "failopen"
\* warm() loads Sync again after a spawn that succeeded.
WarmReloads == Mutation \in {"before9", "warmreload"}
\* warm() undoes a failed spawn with spawn_failed() (NFail) instead of its
\* own undo (NWarmFail).
WarmRerun == Mutation \in {"before9", "warmrerun"}

\* Where a join() call starts: the seed has no claim.
JoinEntry == IF Seed THEN "m_join" ELSE "m_claim"

\* Pool states and event states.
States   == {"pending", "signaled", "waking", "shutdown"}
EMPTY    == "EMPTY"
WAITING  == "WAITING"
NOTIFIED == "NOTIFIED"
SHUTDOWN == "SHUTDOWN"
EvStates == {EMPTY, WAITING, NOTIFIED, SHUTDOWN}

\* The pool's two events, plus (seed only) one join event per worker thread,
\* named by the worker itself.
Events == {"idle", "join"} \cup (IF Seed THEN Workers ELSE {})

\* Who owns an event's memory: the pool, or the thread whose stack holds it.
Owner(e) == IF e \in Workers THEN e ELSE "pool"

VARIABLES
    sync,       \* the Sync word: [idle, spawned, notified, state]
    ev,         \* ev[e]: the state word of event e
    sleepers,   \* sleepers[e]: threads blocked in futex_wait on event e
    queued,     \* tasks sitting in some queue
    scheduled,  \* tasks the client has pushed so far
    ran,        \* tasks that have run to completion
    holding,    \* holding[t]: t has popped a task and not yet run it
    fails,      \* OS spawns that failed so far
    pc,         \* program counter of every thread
    waking,     \* waking[w]: w holds the "waking worker" role
    isIdle,     \* isIdle[w]: wait()'s local is_idle (w counted itself in idle)
    spun,       \* spun[w]: wait()'s local spun (this wait() has spun already)
    owes,       \* owes[w]: w consumed a notification and has not yet found
                \* a task or an empty pool since (work conservation: it must not
                \* leave work behind unannounced)
    kids,       \* kids[w]: children the task w runs has still to schedule
    forked,     \* the first task to run has taken the Fanout children on
    born,       \* children scheduled so far (scheduled - born: the client's)
    nf,         \* notify frame  [on, waking, more, spawn, ret]
    wf,         \* Event.wait frame [e, acq, ret]
    kf,         \* Event.wake frame [e, val, all, ret]
    stack,      \* seed only: the registered-threads stack (head = newest)
    joinst,     \* join(): "open", "claimed" (a join() took it), "joined"
                \* (done() called on the WaitGroup; before9: joined_ set)
    ring,       \* StealDelay: ring[w], how many of the queued tasks are in
                \* w's ring (the rest, Global, are in the global queue)
    taken,      \* StealDelay: taken[w], how many tasks have left w's ring
                \* (the ring's head index: it only grows)
    watch,      \* StealDelay: watch[w], the lone task thief w leaves alone:
                \* [v |-> victim, at |-> taken[v] at the look], or NoWatch
    visited     \* StealDelay: visited[w], the rings this search has looked at

vars == <<sync, ev, sleepers, queued, scheduled, ran, holding, fails, pc,
          waking, isIdle, spun, owes, kids, forked, born, nf, wf, kf, stack, joinst,
          ring, taken, watch, visited>>
RingVars == <<ring, taken, watch, visited>>

NoNotify == [on |-> FALSE, waking |-> FALSE, more |-> TRUE, spawn |-> TRUE,
             ret |-> "none"]
NoWait   == [e |-> "none", acq |-> EMPTY, ret |-> "none"]
NoWake   == [e |-> "none", val |-> NOTIFIED, all |-> FALSE, ret |-> "none"]
NoWatch  == [v |-> "none", at |-> 0]

\* How many queued tasks sit in rings, and how many in the global queue.
RECURSIVE SumOf(_, _)
SumOf(f, S) == IF S = {} THEN 0
               ELSE LET x == CHOOSE x \in S : TRUE IN f[x] + SumOf(f, S \ {x})
InRings == SumOf(ring, Workers)
Global  == queued - InRings

-----------------------------------------------------------------------------
(* Labels.  Worker labels start with w_, client labels with m_ (warm():    *)
(* a_), the notify procedure with n_, Event.wait with ew_, Event.wake with *)
(* ek_.                                                                    *)

WorkerLabels == {"unborn", "w_start", "w_wait", "w_pop", "w_steal", "w_delay",
                 "w_run", "w_sweep", "w_unreg", "w_jwait", "w_jnext", "exited"}
MainLabels   == {"m_sched", "m_shutdown", "m_close", "m_claim", "m_join",
                 "m_join2", "m_closers", "m_drain", "m_pjoin", "m_wg",
                 "m_chain", "m_idle", "a_warm", "a_reload", "done"}
NotifyLabels == {"n_fast", "n_slow", "n_spawn", "n_fail", "n_wfail", "n_close"}
WaitLabels   == {"ew_loop", "ew_futex", "ew_sleep"}
WakeLabels   == {"ek_swap", "ek_futex"}
Labels == WorkerLabels \cup MainLabels \cup NotifyLabels \cup WaitLabels
          \cup WakeLabels

TypeOK ==
    /\ sync \in [idle : 0..MaxThreads, spawned : 0..MaxThreads,
                 notified : BOOLEAN, state : States]
    /\ ev \in [Events -> EvStates]
    /\ sleepers \in [Events -> SUBSET Threads]
    /\ queued \in 0..AllTasks /\ scheduled \in 0..AllTasks /\ ran \in 0..AllTasks
    /\ holding \in [Threads -> BOOLEAN]
    /\ fails \in 0..MaxFail
    /\ pc \in [Threads -> Labels]
    /\ waking \in [Workers -> BOOLEAN]
    /\ isIdle \in [Workers -> BOOLEAN]
    /\ spun \in [Workers -> BOOLEAN]
    /\ owes \in [Workers -> BOOLEAN]
    /\ kids \in [Workers -> 0..Fanout]
    /\ forked \in BOOLEAN
    /\ born \in 0..Fanout
    /\ nf \in [Threads -> [on : BOOLEAN, waking : BOOLEAN, more : BOOLEAN,
                           spawn : BOOLEAN, ret : Labels \cup {"none"}]]
    /\ wf \in [Threads -> [e : Events \cup {"none"}, acq : EvStates,
                           ret : Labels \cup {"none"}]]
    /\ kf \in [Threads -> [e : Events \cup {"none"}, val : EvStates,
                           all : BOOLEAN, ret : Labels \cup {"none"}]]
    /\ stack \in Seq(Workers)
    /\ joinst \in {"open", "claimed", "joined"}
    /\ ring \in [Workers -> 0..AllTasks] /\ InRings <= queued
    /\ taken \in [Workers -> 0..AllTasks]
    /\ watch \in [Workers -> {NoWatch} \cup [v : Workers, at : 0..AllTasks]]
    /\ visited \in [Workers -> SUBSET Workers]

-----------------------------------------------------------------------------
Init ==
    /\ sync = [idle |-> 0, spawned |-> 0, notified |-> FALSE, state |-> "pending"]
    /\ ev = [e \in Events |-> EMPTY]
    /\ sleepers = [e \in Events |-> {}]
    /\ queued = 0 /\ scheduled = 0 /\ ran = 0
    /\ holding = [t \in Threads |-> FALSE]
    /\ fails = 0
    /\ pc = [t \in Threads |-> CASE t = Main     -> "m_sched"
                                [] t \in Joiners -> JoinEntry
                                [] t \in Warmers -> "a_warm"
                                [] OTHER         -> "unborn"]
    /\ waking = [w \in Workers |-> FALSE]
    /\ isIdle = [w \in Workers |-> FALSE]
    /\ spun = [w \in Workers |-> FALSE]
    /\ owes = [w \in Workers |-> FALSE]
    /\ kids = [w \in Workers |-> 0]
    /\ forked = FALSE
    /\ born = 0
    /\ nf = [t \in Threads |-> NoNotify]
    /\ wf = [t \in Threads |-> NoWait]
    /\ kf = [t \in Threads |-> NoWake]
    /\ stack = <<>>
    /\ joinst = "open"
    /\ ring = [w \in Workers |-> 0]
    /\ taken = [w \in Workers |-> 0]
    /\ watch = [w \in Workers |-> NoWatch]
    /\ visited = [w \in Workers |-> {}]

\* Helpers to "call" a procedure: set the frame and jump to its entry label.
\* notify(is_waking, more_work): more_work is the waker's found.pushed.
CallNotify(t, isWaking, more, ret) ==
    /\ nf' = [nf EXCEPT ![t] = [on |-> TRUE, waking |-> isWaking, more |-> more,
                                spawn |-> TRUE, ret |-> ret]]
    /\ pc' = [pc EXCEPT ![t] = "n_fast"]

\* Event.wait(e); returns to ret.
CallWait(t, e, ret) ==
    /\ wf' = [wf EXCEPT ![t] = [e |-> e, acq |-> EMPTY, ret |-> ret]]
    /\ pc' = [pc EXCEPT ![t] = "ew_loop"]

\* Event.notify(e) (wake one) or Event.shutdown(e) (wake all).
CallWake(t, e, val, ret) ==
    /\ kf' = [kf EXCEPT ![t] = [e |-> e, val |-> val, all |-> (val = SHUTDOWN),
                                ret |-> ret]]
    /\ pc' = [pc EXCEPT ![t] = "ek_swap"]

Goto(t, l) == pc' = [pc EXCEPT ![t] = l]

-----------------------------------------------------------------------------
(***************************************************************************)
(* Event (src/zap/event.hpp).                                              *)
(***************************************************************************)

\* wait(): one turn of the loop, deciding on the word just read.
EvLoop(t) ==
    LET e == wf[t].e  s == ev[e] IN
    /\ pc[t] = "ew_loop"
    /\ CASE s = SHUTDOWN ->                      \* shut down: return
              /\ Goto(t, wf[t].ret) /\ wf' = [wf EXCEPT ![t] = NoWait]
              /\ UNCHANGED ev
         [] s = NOTIFIED ->                      \* take it (CAS)
              /\ ev' = [ev EXCEPT ![e] = wf[t].acq]
              /\ Goto(t, wf[t].ret) /\ wf' = [wf EXCEPT ![t] = NoWait]
         [] s = WAITING ->
              /\ Goto(t, "ew_futex") /\ UNCHANGED <<ev, wf>>
         [] OTHER ->                             \* EMPTY: CAS to WAITING
              /\ ev' = [ev EXCEPT ![e] = WAITING]
              /\ Goto(t, "ew_futex") /\ UNCHANGED wf
    /\ UNCHANGED <<sleepers, kf>>

\* futex_wait(word, WAITING): sleeps only if the word still is WAITING.
EvFutexWait(t) ==
    LET e == wf[t].e IN
    /\ pc[t] = "ew_futex"
    /\ IF ev[e] = WAITING
         THEN /\ sleepers' = [sleepers EXCEPT ![e] = @ \cup {t}]
              /\ Goto(t, "ew_sleep") /\ UNCHANGED wf
         ELSE /\ Goto(t, "ew_loop") /\ UNCHANGED sleepers
              /\ wf' = [wf EXCEPT ![t].acq = WAITING]
    /\ UNCHANGED <<ev, kf>>

\* Back from futex_wait after a futex_wake took us off the queue.
EvWoken(t) ==
    /\ pc[t] = "ew_sleep" /\ t \notin sleepers[wf[t].e]
    /\ Goto(t, "ew_loop")
    /\ wf' = [wf EXCEPT ![t].acq = WAITING]
    /\ UNCHANGED <<ev, sleepers, kf>>

\* A spurious wake-up: the kernel returns from futex_wait on its own.
\* Never given fairness, so no liveness property may depend on it.
Spurious(t) ==
    /\ pc[t] = "ew_sleep" /\ t \in sleepers[wf[t].e]
    /\ sleepers' = [sleepers EXCEPT ![wf[t].e] = @ \ {t}]
    /\ UNCHANGED <<sync, ev, queued, scheduled, ran, holding, fails, pc,
                   waking, isIdle, spun, owes, kids, forked, born, nf, wf, kf, stack, joinst>>
    /\ UNCHANGED RingVars

\* wake(post, n), first half.  Fixed: CAS loop that leaves SHUTDOWN alone.
\* Seed: unconditional swap.  The futex is called if the old word was
\* WAITING; with WakeAllOnShutdown, a shutdown() that changed the word calls
\* it in any case: a sleeper may remain on the futex while the word reads
\* NOTIFIED (another sleeper was woken for it and has not taken it yet).
EvSwap(t) ==
    LET e == kf[t].e  old == ev[e]
        callFutex == \/ old = WAITING
                     \/ WakeAllOnShutdown /\ kf[t].val = SHUTDOWN /\ old # SHUTDOWN
    IN
    /\ pc[t] = "ek_swap"
    /\ IF ~Seed /\ old = SHUTDOWN
         THEN UNCHANGED ev
         ELSE ev' = [ev EXCEPT ![e] = kf[t].val]
    /\ IF callFutex
         THEN Goto(t, "ek_futex") /\ UNCHANGED kf
         ELSE Goto(t, kf[t].ret) /\ kf' = [kf EXCEPT ![t] = NoWake]
    /\ UNCHANGED <<sleepers, wf>>

\* wake(), second half: futex_wake(word, n).
EvFutexWake(t) ==
    LET e == kf[t].e IN
    /\ pc[t] = "ek_futex"
    /\ IF kf[t].all \/ sleepers[e] = {}
         THEN sleepers' = [sleepers EXCEPT ![e] = {}]
         ELSE \E s \in sleepers[e] : sleepers' = [sleepers EXCEPT ![e] = @ \ {s}]
    /\ Goto(t, kf[t].ret) /\ kf' = [kf EXCEPT ![t] = NoWake]
    /\ UNCHANGED <<ev, wf>>

EventStep(t) == EvLoop(t) \/ EvFutexWait(t) \/ EvWoken(t) \/ EvSwap(t)
                \/ EvFutexWake(t)

-----------------------------------------------------------------------------
(***************************************************************************)
(* notify(is_waking) and its slow path (pool_core.hpp: notify,             *)
(* notify_slow, spawn failure).                                            *)
(***************************************************************************)

NotifyReturn(t) ==
    /\ Goto(t, nf[t].ret) /\ nf' = [nf EXCEPT ![t] = NoNotify]

\* Fast path: a schedule() that sees `notified` already set leaves it to
\* whoever will consume that notification.
NFast(t) ==
    /\ pc[t] = "n_fast"
    /\ IF ~nf[t].waking /\ sync.notified
         THEN NotifyReturn(t)
         ELSE Goto(t, "n_slow") /\ UNCHANGED nf
    /\ UNCHANGED <<sync, waking, kf, fails>>

\* Slow path: one successful CAS (or a return decided on a fresh load).
\* Give-back: a waker whose search moved no extra task
\* (more_work = found.pushed false) and that finds `notified` still clear
\* (no schedule() reached its slow path since its wait() cleared it) sets
\* the state back to pending, leaves `notified` clear and wakes nobody.
\* A CAS that fails on a word changed by such a push is, in this model,
\* the same step taken on the new word: it sees `notified` and hands on.
NSlow(t) ==
    LET s == sync
        w == nf[t].waking
        giveBack == /\ ~Seed /\ Mutation # "handover"   \* the seed always hands on
                    /\ w /\ ~nf[t].more /\ ~s.notified
        canWake == ~giveBack /\ (w \/ s.state = "pending")
        n == [s EXCEPT !.notified = TRUE]
        dropRole == IF t \in Workers THEN waking' = [waking EXCEPT ![t] = FALSE]
                                     ELSE UNCHANGED waking
    IN
    /\ pc[t] = "n_slow"
    /\ UNCHANGED fails
    /\ CASE s.state = "shutdown" ->
              NotifyReturn(t) /\ dropRole /\ UNCHANGED <<sync, kf>>
         [] giveBack ->                            \* give the role back
              /\ sync' = [s EXCEPT !.state = "pending"]   \* notified stays clear
              /\ dropRole
              /\ NotifyReturn(t) /\ UNCHANGED kf
         [] canWake /\ s.idle > 0 ->              \* wake an idle worker
              /\ sync' = [n EXCEPT !.state = "signaled"]
              /\ dropRole
              /\ IF Mutation = "nowake"
                   THEN NotifyReturn(t) /\ UNCHANGED kf
                   ELSE /\ CallWake(t, "idle", NOTIFIED, nf[t].ret)
                        /\ nf' = [nf EXCEPT ![t] = NoNotify]
         [] canWake /\ (s.spawned < MaxThreads \/ Mutation = "nocap")
                    /\ nf[t].spawn ->                    \* spawn one
              /\ sync' = [n EXCEPT !.state = "signaled", !.spawned = @ + 1]
              /\ dropRole
              /\ Goto(t, "n_spawn") /\ UNCHANGED <<nf, kf>>
         [] w ->                                   \* nobody to pass the role to
              /\ sync' = [n EXCEPT !.state = "pending"]
              /\ dropRole
              /\ NotifyReturn(t) /\ UNCHANGED kf
         [] s.notified ->                          \* already notified
              NotifyReturn(t) /\ UNCHANGED <<sync, waking, kf>>
         [] OTHER ->                               \* just post the notification
              /\ sync' = n
              /\ NotifyReturn(t) /\ UNCHANGED <<waking, kf>>

\* The OS thread spawn, after the reservation: succeeds (the thread starts
\* in some unused slot) or fails (at most MaxFail times per behaviour).
NSpawn(t) ==
    /\ pc[t] = "n_spawn"
    /\ \/ /\ \E w \in Workers :
               /\ pc[w] = "unborn"
               /\ pc' = [pc EXCEPT ![t] = nf[t].ret, ![w] = "w_start"]
          /\ nf' = [nf EXCEPT ![t] = NoNotify]
          /\ UNCHANGED <<sync, fails, kf>>
       \/ /\ fails < MaxFail
          /\ fails' = fails + 1
          /\ IF Seed
               THEN \* unregister(null): give back the reservation, nothing else
                    /\ sync' = [sync EXCEPT !.spawned = @ - 1]
                    /\ IF sync.state = "shutdown" /\ sync.spawned = 1
                         THEN /\ CallWake(t, "join", NOTIFIED, nf[t].ret)
                              /\ nf' = [nf EXCEPT ![t] = NoNotify]
                         ELSE NotifyReturn(t) /\ UNCHANGED kf
               ELSE \* (warm() returns after the undo, reloading nothing)
                    /\ nf' = [nf EXCEPT ![t].ret = IF @ = "a_reload" THEN "done"
                                                                      ELSE @]
                    /\ Goto(t, IF t \in Warmers /\ ~WarmRerun THEN "n_wfail"
                                                               ELSE "n_fail")
                    /\ UNCHANGED <<sync, kf>>
    /\ UNCHANGED waking

\* Fixed protocol: undo a failed spawn.  Give back the reservation, undo the
\* signal it posted, and if no worker is left to consume `notified` clear it
\* too; then either wake the joiner (shut down, last one) or, if a worker
\* is left, run the slow path again without spawning so that an idle worker
\* is woken instead.  With no worker left there is nobody to wake, and a
\* re-run would set `notified` again with nobody to consume it: every later
\* schedule() would then stop at the fast path (Mutation "rerun"
\* models that broken variant).  Waking the joiner: the CAS that takes
\* `spawned` to 0 after shutdown also adds a closer (the `idle` field,
\* reused after shutdown), given back (NClose) only after the event call,
\* so join() cannot return and free the pool under that call (before9: no
\* closer, and a spawner that is not a worker notifies a join event that
\* may already be freed).
NFail(t) ==
    LET s == sync
        n1 == [s EXCEPT !.spawned = @ - 1,
                        !.state = IF @ = "signaled" THEN "pending" ELSE @]
        n2 == IF n1.spawned = 0 /\ s.state # "shutdown"
                THEN [n1 EXCEPT !.notified = FALSE] ELSE n1
        last == s.state = "shutdown" /\ s.spawned = 1
    IN
    /\ pc[t] = "n_fail"
    /\ UNCHANGED fails
    /\ sync' = IF last /\ FailCloser THEN [n2 EXCEPT !.idle = @ + 1] ELSE n2
    /\ IF s.state = "shutdown"
         THEN IF last
                THEN IF FailCloser
                       THEN /\ CallWake(t, "join", NOTIFIED, "n_close")
                            /\ UNCHANGED nf
                       ELSE /\ CallWake(t, "join", NOTIFIED, nf[t].ret)
                            /\ nf' = [nf EXCEPT ![t] = NoNotify]
                ELSE NotifyReturn(t) /\ UNCHANGED kf
         ELSE IF n2.spawned = 0 /\ Mutation # "rerun"
                THEN NotifyReturn(t) /\ UNCHANGED kf
                ELSE /\ nf' = [nf EXCEPT ![t].waking = FALSE, ![t].spawn = FALSE]
                     /\ Goto(t, "n_slow") /\ UNCHANGED kf
    /\ UNCHANGED waking

\* spawn_failed(), after its join event notify: give the closer back
\* (fetch_sub, release), its last touch of the pool.
NClose(t) ==
    /\ pc[t] = "n_close"
    /\ sync' = [sync EXCEPT !.idle = @ - 1]
    /\ NotifyReturn(t)
    /\ UNCHANGED <<waking, kf, fails>>

\* warm()'s undo of a failed spawn (fixed protocol).  warm()'s reservation
\* posted no signal, so the undo leaves `state` alone (a `signaled` there
\* is another notifier's, for a worker it is waking or spawning) and runs
\* no notify_slow: after this CAS the warmer holds nothing that keeps
\* join() waiting, so it must not touch the pool again, except as a closer
\* (taken, as in NFail, when the CAS takes spawned to 0 after shutdown).
\* One CAS: spawned - 1, `notified` cleared if no worker is left and the
\* pool is not shut down.  (The C++ of b41aef4 still undoes warm()'s failed
\* spawn with spawn_failed(), i.e. WarmRerun: MCMutWarmRerun.)
NWarmFail(t) ==
    LET s == sync
        n1 == [s EXCEPT !.spawned = @ - 1]
        n2 == IF n1.spawned = 0 /\ s.state # "shutdown"
                THEN [n1 EXCEPT !.notified = FALSE] ELSE n1
        last == s.state = "shutdown" /\ s.spawned = 1
    IN
    /\ pc[t] = "n_wfail"
    /\ sync' = IF last /\ FailCloser THEN [n2 EXCEPT !.idle = @ + 1] ELSE n2
    /\ IF last
         THEN /\ CallWake(t, "join", NOTIFIED,
                           IF FailCloser THEN "n_close" ELSE nf[t].ret)
              /\ nf' = IF FailCloser THEN nf ELSE [nf EXCEPT ![t] = NoNotify]
         ELSE NotifyReturn(t) /\ UNCHANGED kf
    /\ UNCHANGED <<waking, fails>>

NotifyStep(t) == NFast(t) \/ NSlow(t) \/ NSpawn(t) \/ NFail(t) \/ NWarmFail(t)
                 \/ NClose(t)

-----------------------------------------------------------------------------
(***************************************************************************)
(* Worker thread (pool_core.hpp: worker main loop, wait, unregister).      *)
(***************************************************************************)

\* Thread start: register (seed: push onto the threads stack).
WStart(w) ==
    /\ pc[w] = "w_start"
    /\ stack' = IF Seed THEN <<w>> \o stack ELSE stack
    /\ Goto(w, "w_wait")
    /\ UNCHANGED <<sync, waking, isIdle, queued, ran, holding, nf, wf, kf>>
    /\ UNCHANGED <<owes, kids, forked, born, scheduled, spun>>

\* wait(is_waking): one turn of the loop, on a freshly loaded Sync word.
WWait(w) ==
    LET s == sync IN
    /\ pc[w] = "w_wait"
    /\ CASE s.state = "shutdown" ->               \* error.Shutdown
              /\ Goto(w, IF Seed THEN "w_unreg" ELSE "w_sweep")
              /\ waking' = [waking EXCEPT ![w] = FALSE]
              /\ isIdle' = [isIdle EXCEPT ![w] = FALSE]
              /\ spun' = [spun EXCEPT ![w] = FALSE]
              /\ UNCHANGED <<sync, wf, owes>>
         [] s.notified ->                          \* consume the notification
              /\ sync' = [s EXCEPT !.notified = FALSE,
                                   !.idle = IF isIdle[w] THEN @ - 1 ELSE @,
                                   !.state = IF @ = "signaled" THEN "waking" ELSE @]
              /\ waking' = [waking EXCEPT ![w] = @ \/ s.state = "signaled"
                                                   \/ Mutation = "wakeany"]
              /\ isIdle' = [isIdle EXCEPT ![w] = FALSE]
              /\ spun' = [spun EXCEPT ![w] = FALSE]
              /\ owes' = [owes EXCEPT ![w] = TRUE]
              /\ Goto(w, "w_pop") /\ UNCHANGED wf
         [] Spin /\ ~spun[w] /\ ~isIdle[w] ->    \* A5's spin
              \* Take the waking role if nobody holds it (or keep ours), and
              \* keep it until the next step of this loop: a notify in
              \* between finds the state waking and only sets `notified`,
              \* which that step consumes; otherwise it gives the role back
              \* as it counts itself idle (the spin ran out).
              /\ sync' = IF waking[w] \/ s.state = "pending"
                           THEN [s EXCEPT !.state = "waking"] ELSE s
              /\ waking' = [waking EXCEPT ![w] = @ \/ s.state = "pending"]
              /\ spun' = [spun EXCEPT ![w] = TRUE]
              /\ UNCHANGED <<pc, wf, owes, isIdle>>
         [] ~isIdle[w] ->                          \* count ourselves idle
              /\ sync' = [s EXCEPT !.idle = @ + 1,
                                   !.state = IF waking[w] /\ ~(Mutation = "spinkeep" /\ spun[w])
                                             THEN "pending" ELSE @]
              /\ waking' = [waking EXCEPT ![w] = FALSE]
              /\ isIdle' = [isIdle EXCEPT ![w] = TRUE]
              /\ UNCHANGED <<pc, wf, owes, spun>>
         [] OTHER ->                               \* sleep on the idle event
              /\ CallWait(w, "idle", "w_wait")
              /\ UNCHANGED <<sync, waking, isIdle, owes, spun>>
    /\ UNCHANGED <<queued, ran, holding, stack, nf, kf, kids, forked, born, scheduled>>

\* pop(): take a task if there is one.  `pushed` (the steal moved more than
\* one task into our buffer) is possible only if tasks are left, and need
\* not be set then (the others may sit in other rings, or half of two is
\* one): a free choice when tasks are left, FALSE otherwise.  `left` is the
\* look the C++ takes after finding its task (pool_core.hpp A4,
\* Worker::sees_work): is work still queued anywhere?  A pop is exact here,
\* so that look is exact too.  Then, before running the task:
\*   - the waker calls notify(is_waking, more) with more = pushed \/ left:
\*     it hands its role on while work is left, and gives it back only
\*     when none is (the give-back, with the work-conservation condition);
\*   - a worker whose search moved extra tasks calls notify();
\*   - so does a worker that consumed a notification (owes) and leaves
\*     work behind (work conservation): the notification may have covered it.
\* "before19": the rule before the work-conservation look (more = pushed, no owes).
\* The first task to run takes the Fanout children on (WRun pushes them).
\* With StealDelay the search is WSearch below instead (WPop, after it).
Found(w, pushed) ==
    LET left == queued > 1
        old == Mutation = "before19"
        more == IF old THEN pushed ELSE pushed \/ left
        announce == \/ pushed \/ waking[w]
                    \/ ~old /\ owes[w] /\ left
    IN /\ queued' = queued - 1
       /\ holding' = [holding EXCEPT ![w] = TRUE]
       /\ kids' = IF forked THEN kids ELSE [kids EXCEPT ![w] = Fanout]
       /\ forked' = TRUE
       /\ owes' = [owes EXCEPT ![w] = FALSE]
       /\ IF announce
            THEN CallNotify(w, waking[w], more, "w_run")
            ELSE Goto(w, "w_run") /\ UNCHANGED nf

\* The search found nothing: back to wait().
NotFound(w) ==
    /\ Goto(w, "w_wait")
    /\ owes' = [owes EXCEPT ![w] = FALSE]
    /\ UNCHANGED <<queued, holding, nf, kids, forked>>

(***************************************************************************)
(* StealDelay: the search of Worker::find over rings (buffer.hpp steps 2-4, *)
(* 3a).  Own ring first (the owner's pop, oldest first), then the global   *)
(* queue (consume: one task to run, the rest into our ring), then the      *)
(* other workers' rings one at a time, each looked at once, in any order   *)
(* (the C++ goes round from a cursor), each look one step: a ring looked   *)
(* at while empty is passed, as the C++ passes it, even if a task lands    *)
(* there later in the search.  A ring of two or more: steal half, rounded  *)
(* up (one to run, the rest into our ring).  A ring of one, the lone task: *)
(* leave it alone (w_delay) and note the ring's head (taken); in the next  *)
(* step of this thread - any number of other threads' steps later, which  *)
(* is the delay - claim it if the head has not moved (DL1), else pass the   *)
(* ring (DL2) and go on with the others.  The overflow queues of workers    *)
(* (a ring never overflows in these configurations) are not modelled.      *)
(***************************************************************************)
WSearch(w) ==
    CASE ring[w] > 0 ->                           \* own ring: pop the oldest
           /\ ring' = [ring EXCEPT ![w] = @ - 1]
           /\ taken' = [taken EXCEPT ![w] = @ + 1]
           /\ Found(w, FALSE)
           /\ UNCHANGED <<watch, visited>>
      [] Global > 0 ->                            \* consume the global queue
           /\ ring' = [ring EXCEPT ![w] = Global - 1]
           /\ Found(w, Global > 1)
           /\ UNCHANGED <<taken, watch, visited>>
      [] OTHER ->                                 \* the other rings, one by one
           /\ visited' = [visited EXCEPT ![w] = {w}]
           /\ Goto(w, "w_steal")
           /\ UNCHANGED <<ring, taken, watch, queued, holding, kids, forked, owes, nf>>

\* Steal half of v's ring (its size rounded up): one to run, the rest into
\* our (empty) ring; the search ends.
StealHalf(w, v) ==
    LET half == ring[v] - ring[v] \div 2 IN
    /\ ring' = [ring EXCEPT ![v] = @ - half, ![w] = half - 1]
    /\ taken' = [taken EXCEPT ![v] = @ + half]
    /\ visited' = [visited EXCEPT ![w] = {}]
    /\ Found(w, half > 1)

WSteal(w) ==
    /\ pc[w] = "w_steal"
    /\ IF visited[w] = Workers
         THEN /\ NotFound(w)                     \* every ring looked at
              /\ visited' = [visited EXCEPT ![w] = {}]
              /\ UNCHANGED <<ring, taken, watch>>
         ELSE \E v \in Workers \ visited[w] :
              CASE ring[v] = 0 \/ (ring[v] = 1 /\ Mutation = "refuse") ->
                     \* empty: pass it ("refuse": a lone task passed at once)
                     /\ visited' = [visited EXCEPT ![w] = @ \cup {v}]
                     /\ UNCHANGED <<pc, ring, taken, watch, queued, holding,
                                    kids, forked, owes, nf>>
                [] ring[v] = 1 ->                  \* the lone task: leave it
                     /\ visited' = [visited EXCEPT ![w] = @ \cup {v}]
                     /\ watch' = [watch EXCEPT ![w] = [v |-> v, at |-> taken[v]]]
                     /\ Goto(w, "w_delay")
                     /\ UNCHANGED <<ring, taken, queued, holding, kids, forked,
                                    owes, nf>>
                [] OTHER -> StealHalf(w, v) /\ UNCHANGED watch
    /\ UNCHANGED <<sync, waking, isIdle, spun, ran, scheduled, born, stack, wf, kf>>

\* The delay's end: the head has not moved, so the task seen alone is still
\* there (perhaps with others pushed since): claim as a steal does (DL1).
\* It has moved: that task is gone; pass the ring (DL2).
WDelay(w) ==
    LET v == watch[w].v IN
    /\ pc[w] = "w_delay"
    /\ watch' = [watch EXCEPT ![w] = NoWatch]
    /\ IF taken[v] = watch[w].at
         THEN StealHalf(w, v)
         ELSE /\ Goto(w, "w_steal")
              /\ UNCHANGED <<ring, taken, visited, queued, holding, kids, forked,
                             owes, nf>>
    /\ UNCHANGED <<sync, waking, isIdle, spun, ran, scheduled, born, stack, wf, kf>>

WPop(w) ==
    /\ pc[w] = "w_pop"
    /\ IF StealDelay THEN WSearch(w)
       ELSE /\ IF queued > 0
                 THEN \E pushed \in IF queued > 1 THEN BOOLEAN ELSE {FALSE} : Found(w, pushed)
                 ELSE NotFound(w)
            /\ UNCHANGED RingVars
    /\ UNCHANGED <<sync, waking, isIdle, spun, ran, scheduled, born, stack, wf, kf>>

\* Run the task we hold (is_waking is already false here): first it
\* schedules its children, one schedule() (push, notify) each, then it
\* returns.
WRun(w) ==
    /\ pc[w] = "w_run"
    /\ IF kids[w] > 0
         THEN /\ kids' = [kids EXCEPT ![w] = @ - 1]
              /\ queued' = queued + 1 /\ scheduled' = scheduled + 1
              /\ born' = born + 1
              /\ ring' = IF StealDelay THEN [ring EXCEPT ![w] = @ + 1] ELSE ring
              /\ CallNotify(w, FALSE, TRUE, "w_run")
              /\ UNCHANGED <<ran, holding>>
         ELSE /\ ran' = ran + 1
              /\ holding' = [holding EXCEPT ![w] = FALSE]
              /\ Goto(w, "w_pop")
              /\ UNCHANGED <<kids, queued, scheduled, born, nf, ring>>
    /\ UNCHANGED <<sync, waking, isIdle, spun, owes, forked, stack, wf, kf>>
    /\ UNCHANGED <<taken, watch, visited>>

\* StealDelay: where a task that the sweep or the drain takes comes from -
\* the global queue or any ring (their search order is not modelled, nor
\* the sweep's delays: after shutdown join()'s drain runs what a sweep
\* passes over); ring and taken follow.
LeaveQueue ==
    IF ~StealDelay THEN UNCHANGED <<ring, taken>>
    ELSE \/ Global > 0 /\ UNCHANGED <<ring, taken>>
         \/ \E v \in Workers :
               /\ ring[v] > 0
               /\ ring' = [ring EXCEPT ![v] = @ - 1]
               /\ taken' = [taken EXCEPT ![v] = @ + 1]

\* Fixed protocol: after Shutdown, run whatever is still queued.
WSweep(w) ==
    /\ pc[w] = "w_sweep"
    /\ IF queued > 0
         THEN /\ queued' = IF Mutation = "dup" THEN queued ELSE queued - 1
              /\ ran' = ran + 1
              /\ LeaveQueue
              /\ UNCHANGED pc
         ELSE Goto(w, "w_unreg") /\ UNCHANGED <<queued, ran, ring, taken>>
    /\ UNCHANGED <<sync, waking, isIdle, holding, stack, nf, wf, kf>>
    /\ UNCHANGED <<owes, kids, forked, born, scheduled, spun, watch, visited>>

\* unregister: fetch_sub(one_spawned); the last one out after shutdown
\* wakes the joiner.  Fixed: the thread then returns (joinable).
\* Seed: it then waits on its own join event.
WUnreg(w) ==
    LET next == IF Seed THEN "w_jwait" ELSE "exited" IN
    /\ pc[w] = "w_unreg"
    /\ sync' = [sync EXCEPT !.spawned = @ - 1]
    /\ IF sync.state = "shutdown" /\ sync.spawned = 1
         THEN CallWake(w, "join", NOTIFIED, next)
         ELSE Goto(w, next) /\ UNCHANGED kf
    /\ UNCHANGED <<waking, isIdle, queued, ran, holding, stack, nf, wf>>
    /\ UNCHANGED <<owes, kids, forked, born, scheduled, spun>>

\* Seed: block on our own join event until the chain reaches us.
WJoinWait(w) ==
    /\ pc[w] = "w_jwait"
    /\ CallWait(w, w, "w_jnext")
    /\ UNCHANGED <<sync, waking, isIdle, queued, ran, holding, stack, nf, kf>>
    /\ UNCHANGED <<owes, kids, forked, born, scheduled, spun>>

\* Seed: pass the join signal to the next registered thread, then exit
\* (the Thread struct lives on this thread's stack and dies with it).
NextOf(w) ==
    LET i == CHOOSE i \in 1..Len(stack) : stack[i] = w IN
    IF i < Len(stack) THEN stack[i + 1] ELSE "none"

WJoinNext(w) ==
    /\ pc[w] = "w_jnext"
    /\ IF NextOf(w) # "none"
         THEN CallWake(w, NextOf(w), NOTIFIED, "exited")
         ELSE Goto(w, "exited") /\ UNCHANGED kf
    /\ UNCHANGED <<sync, waking, isIdle, queued, ran, holding, stack, nf, wf>>
    /\ UNCHANGED <<owes, kids, forked, born, scheduled, spun>>

WorkerOwnStep(w) ==
    \/ WPop(w) \/ WSteal(w) \/ WDelay(w) \/ WRun(w) \/ WSweep(w)
    \/ (WStart(w) \/ WWait(w) \/ WUnreg(w) \/ WJoinWait(w) \/ WJoinNext(w))
       /\ UNCHANGED RingVars

-----------------------------------------------------------------------------
(***************************************************************************)
(* The client threads: Main schedules each task and calls shutdown(); it   *)
(* or (Apart) each joiner calls join(); each warmer calls warm(1).  Every  *)
(* action below leaves ev, sleepers, holding, fails, waking, isIdle, stack *)
(* alone (see Step).                                                       *)
(***************************************************************************)

\* schedule(): push one task, then notify(false).
MSched(t) ==
    /\ pc[t] = "m_sched"
    /\ IF scheduled - born < NTasks
         THEN /\ queued' = queued + 1 /\ scheduled' = scheduled + 1
              /\ CallNotify(t, FALSE, TRUE, "m_sched")
         ELSE /\ Goto(t, IF DoShutdown THEN "m_shutdown" ELSE "m_idle")
              /\ UNCHANGED <<queued, scheduled, nf>>
    /\ UNCHANGED <<sync, kf, wf, ran, joinst>>

\* Where Main goes once shutdown() has returned.
AfterShutdown == IF Apart THEN "done" ELSE JoinEntry

\* shutdown(): one CAS, then shut the idle event down if anyone was idle;
\* fixed protocol: with no worker at all, notify the join event (a join()
\* already waiting in another thread would otherwise never wake).  Since
\* the closers-and-claim fix the CAS also takes a closer (the `idle` field, which no worker
\* uses after shutdown), and gives it back (MClose) after its calls: the
\* event call, and the wake of every helping wait asleep (K3 of
\* helping_wait.hpp; tla/Help.tla models it, this spec has no helpers, so
\* here the closer covers a step that touches nothing).  join() waits until
\* no closer is left, so the pool is not freed under those calls (before9:
\* no closer).  Before K3 the closer was taken only with an event call to
\* make.
MShutdown(t) ==
    LET s == sync
        closer == Closers
        after == IF closer THEN "m_close" ELSE AfterShutdown
    IN
    /\ pc[t] = "m_shutdown"
    /\ IF s.state # "shutdown"
         THEN /\ sync' = [s EXCEPT !.state = "shutdown", !.notified = TRUE,
                                   !.idle = IF closer THEN 1 ELSE 0]
              /\ CASE s.idle > 0 ->
                        CallWake(t, "idle", SHUTDOWN, after)
                   [] s.spawned = 0 /\ ~Seed ->   \* no worker will notify join
                        CallWake(t, "join", NOTIFIED, after)
                   [] OTHER -> Goto(t, after) /\ UNCHANGED kf
         ELSE Goto(t, AfterShutdown) /\ UNCHANGED <<sync, kf>>
    /\ UNCHANGED <<queued, scheduled, ran, wf, nf, joinst>>

\* shutdown(), after its event call: give the closer back (fetch_sub,
\* release), its last touch of the pool.
MClose(t) ==
    /\ pc[t] = "m_close"
    /\ sync' = IF Mutation = "closerleak" THEN sync
                                           ELSE [sync EXCEPT !.idle = @ - 1]
    /\ Goto(t, AfterShutdown)
    /\ UNCHANGED <<queued, scheduled, ran, nf, kf, wf, joinst>>

\* join(), first step.  Fixed: claim the join (atomic exchange); a join()
\* that finds it claimed waits on the one-shot WaitGroup (MWait).
\* before9: a plain check of joined_: return if a join() has finished,
\* otherwise go on (two concurrent calls both go on, see MCMutJoinTwice).
MClaim(t) ==
    /\ pc[t] = "m_claim"
    /\ IF Closers
         THEN IF joinst = "open"
                THEN joinst' = "claimed" /\ Goto(t, "m_join")
                ELSE Goto(t, "m_wg") /\ UNCHANGED joinst
         ELSE /\ Goto(t, IF joinst = "joined" THEN "done" ELSE "m_join")
              /\ UNCHANGED joinst
    /\ UNCHANGED <<sync, queued, scheduled, ran, nf, kf, wf>>

Joinable == sync.state = "shutdown" /\ sync.spawned = 0

\* join(): wait until shut down with no worker left.  Fixed: re-check
\* after every wake-up.  Seed: one wait (skipped if already joinable).
JoinNext == CASE Seed    -> "m_chain"
              [] Closers -> "m_closers"
              [] OTHER   -> "m_drain"

MJoin(t) ==
    /\ pc[t] = "m_join"
    /\ IF Joinable
         THEN Goto(t, JoinNext) /\ UNCHANGED wf
         ELSE CallWait(t, "join", "m_join2")
    /\ UNCHANGED <<sync, queued, scheduled, ran, nf, kf, joinst>>

MJoin2(t) ==
    /\ pc[t] = "m_join2"
    /\ Goto(t, IF Seed THEN "m_chain" ELSE "m_join")
    /\ UNCHANGED <<sync, queued, scheduled, ran, nf, kf, wf, joinst>>

\* Fixed: spin (acquire loads, no sleep) until no closer is left.  Once
\* joinable no closer can be added (shutdown()'s comes with the CAS that
\* makes the state shutdown, spawn_failed()'s and warm()'s with the CAS
\* that takes spawned to 0 after shutdown, and spawned never rises again
\* after shutdown), and the closers have only an event call left, which
\* never blocks.  A load that finds a closer changes nothing: a stuttering
\* step, which weak fairness never demands, so a closer that never leaves
\* shows as a join() that never returns (MCMutCloserLeak), not as a pass.
MClosers(t) ==
    /\ pc[t] = "m_closers"
    /\ IF sync.idle = 0 THEN Goto(t, "m_drain") ELSE UNCHANGED pc
    /\ UNCHANGED <<sync, queued, scheduled, ran, nf, kf, wf, joinst>>

\* Fixed: the joiner runs every task still queued.
MDrain(t) ==
    /\ pc[t] = "m_drain"
    /\ IF queued > 0
         THEN /\ queued' = queued - 1 /\ ran' = ran + 1
              /\ LeaveQueue
              /\ UNCHANGED pc
         ELSE Goto(t, "m_pjoin") /\ UNCHANGED <<queued, ran, ring, taken>>
    /\ UNCHANGED <<sync, scheduled, nf, kf, wf, joinst, watch, visited>>

\* Fixed: pthread_join every worker thread that was started; blocks until
\* each has returned.  Then done() on the join WaitGroup (before9: set
\* joined_) and return; the pool may be freed once every join() returned.
MPJoin(t) ==
    /\ pc[t] = "m_pjoin"
    /\ \A w \in Workers : pc[w] \in {"unborn", "exited"}
    /\ Goto(t, "done")
    /\ joinst' = "joined"
    /\ UNCHANGED <<sync, queued, scheduled, ran, nf, kf, wf>>

\* Fixed: a join() that lost the claim waits on the WaitGroup until the
\* claimer's done() (abstracted to one step: the WaitGroup is pool memory,
\* and the pool is not freed before this join() returns).
MWait(t) ==
    /\ pc[t] = "m_wg"
    /\ joinst = "joined"
    /\ Goto(t, "done")
    /\ UNCHANGED <<sync, queued, scheduled, ran, nf, kf, wf, joinst>>

\* Seed: notify the newest registered thread's join event and return.
MChain(t) ==
    /\ pc[t] = "m_chain"
    /\ IF stack # <<>>
         THEN CallWake(t, Head(stack), NOTIFIED, "done")
         ELSE Goto(t, "done") /\ UNCHANGED kf
    /\ UNCHANGED <<sync, queued, scheduled, ran, nf, wf, joinst>>

\* warm(1): one reservation CAS (spawned + 1, nothing else) if no worker
\* was reserved yet and the pool is not shut down, then the OS spawn.  The
\* warmer touches the pool only while it holds a reservation (which keeps
\* join() waiting) or a closer: after a spawn that succeeded it returns
\* without touching the pool (it reserved every slot it spawns in its
\* CAS), and a failed spawn is undone by NWarmFail, after which it
\* returns.  WarmReloads: warm() loads Sync after the spawn (a_reload) to
\* decide whether to spawn more, which can come after the new worker left,
\* join() returned and the pool was freed.  WarmRerun: the failed spawn
\* is undone by spawn_failed(), whose notify_slow re-run (a worker is
\* left) can come after that worker left, was joined, and the pool freed.
AWarm(t) ==
    /\ pc[t] = "a_warm"
    /\ IF sync.spawned < 1 /\ sync.state # "shutdown"
         THEN /\ sync' = [sync EXCEPT !.spawned = @ + 1]
              /\ nf' = [nf EXCEPT ![t] =
                          [on |-> TRUE, waking |-> FALSE, more |-> TRUE,
                           spawn |-> TRUE,
                           ret |-> IF WarmReloads THEN "a_reload" ELSE "done"]]
              /\ Goto(t, "n_spawn")
         ELSE Goto(t, "done") /\ UNCHANGED <<sync, nf>>
    /\ UNCHANGED <<queued, scheduled, ran, kf, wf, joinst>>

\* WarmReloads: warm()'s loop loads Sync after the spawn; with a target of
\* 1 and its own worker reserved (or the pool shut down) it then returns.
AReload(t) ==
    /\ pc[t] = "a_reload"
    /\ Goto(t, "done")
    /\ UNCHANGED <<sync, queued, scheduled, ran, nf, kf, wf, joinst>>

ClientOwnStep(t) ==
    \/ MDrain(t)
    \/ (MSched(t) \/ MShutdown(t) \/ MClose(t) \/ MClaim(t) \/ MJoin(t)
        \/ MJoin2(t) \/ MClosers(t) \/ MPJoin(t) \/ MWait(t)
        \/ MChain(t) \/ AWarm(t) \/ AReload(t)) /\ UNCHANGED RingVars

-----------------------------------------------------------------------------
\* Variables a step of one kind leaves alone.
EvOnly == <<sync, queued, scheduled, ran, holding, fails, waking, isIdle, nf,
            stack, joinst, owes, kids, forked, born, spun, ring, taken, watch,
            visited>>

Step(t) ==
    \/ EventStep(t) /\ UNCHANGED EvOnly
    \/ NotifyStep(t) /\ UNCHANGED <<ev, sleepers, queued, scheduled, ran,
                                   holding, isIdle, wf, stack, joinst,
                                   owes, kids, forked, born, spun>>
                     /\ UNCHANGED RingVars
    \/ t \in Workers /\ WorkerOwnStep(t)
          /\ UNCHANGED <<ev, sleepers, fails, joinst>>
    \/ t \in Clients /\ ClientOwnStep(t)
          /\ UNCHANGED <<ev, sleepers, holding, fails, waking, isIdle, stack,
                         owes, kids, forked, born, spun>>

\* The pool is freed once every join() call has returned (the last one to
\* return frees it at once: the earliest moment a caller may).
Freed == \A j \in JoinThreads : pc[j] = "done"

Exited(w) == pc[w] \in {"unborn", "exited"}

\* Legitimate ends: everything joined, or (no shutdown) all asleep.
Terminated ==
    \/ \A c \in Clients : pc[c] = "done"
       /\ \A w \in Workers : Exited(w)
    \/ pc[Main] = "m_idle" /\ \A c \in Warmers : pc[c] = "done"
       /\ \A w \in Workers : pc[w] \in {"unborn", "ew_sleep"}

Next ==
    \/ \E t \in Threads : Step(t)
    \/ \E t \in Threads : Spurious(t)
    \/ Terminated /\ UNCHANGED vars

Fairness == \A t \in Threads : WF_vars(Step(t))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(***************************************************************************)
(* Properties.                                                             *)
(***************************************************************************)

\* At most one worker holds the waking role, and only while the state says so.
OneWaking ==
    /\ Cardinality({w \in Workers : waking[w]}) <= 1
    /\ \A w \in Workers : waking[w] => sync.state \in {"waking", "shutdown"}

SpawnBound == sync.spawned <= MaxThreads

\* Since the give-back: no more workers started than tasks scheduled (configurations
\* without warm()).  The old hand-over rule (Mutation "handover") breaks
\* it: the waker of the only task starts a second worker, which finds
\* nothing.  A performance property, not a correctness one.
SpawnsWithinTasks == sync.spawned <= scheduled

\* Not a property: a witness.  Violated in a state where a waker whose
\* search moved no extra task is about to make its notify_slow CAS on a
\* word whose `notified` a schedule() set after the waker cleared it (the
\* CAS retry path of the give-back; it must hand the role on).
NoPushDuringSearch ==
    ~\E w \in Workers : /\ pc[w] = "n_slow" /\ nf[w].waking /\ ~nf[w].more
                        /\ sync.notified /\ sync.state = "waking"

\* Task accounting, and: once a join() has returned every task has run.
TaskConservation ==
    queued + ran + Cardinality({t \in Threads : holding[t]}) = scheduled
NoTaskLost == \A j \in JoinThreads : pc[j] = "done" => ran = scheduled

\* What memory a thread is about to touch with its next step.  A thread
\* that has not started (a worker not spawned, a warmer before warm()) or
\* has returned touches nothing; nor does a seed worker waiting on or
\* passing on its own join event; every other step touches the pool (its
\* Sync word, queues, events, WaitGroup or thread table).  A worker that
\* has exited is returned, not yet joined: MPJoin joins it.
Touches(t) ==
    CASE pc[t] \in WaitLabels -> {Owner(wf[t].e)}
      [] pc[t] \in WakeLabels -> {Owner(kf[t].e)}
      [] pc[t] \in {"unborn", "exited", "w_jwait", "w_jnext", "a_warm",
                    "m_idle", "done"} -> {}
      [] OTHER -> {"pool"}

\* No thread touches another thread's Event after that thread returned.
EventSafety ==
    \A t \in Threads : \A w \in Workers :
        (w \in Touches(t) /\ w # t) => pc[w] # "exited"

\* Nothing of the pool is touched once it is freed: no event step, no
\* Sync step, no queue step, by any thread.  Workers count as touching
\* until they have returned (join() joins them before it returns); client
\* threads until their call returns.
PoolSafety ==
    Freed => \A t \in Threads : "pool" \notin Touches(t)

\* Once an event is shut down it stays shut down (event.hpp invariant E2):
\* a shutdown() that is overwritten lets a later wait() sleep for ever.
ShutdownSticky ==
    [][\A e \in Events : ev[e] = SHUTDOWN => ev'[e] = SHUTDOWN]_ev

\* Liveness.
TasksEventuallyRun == \A k \in 1..AllTasks : (scheduled >= k) ~> (ran >= k)

\* After shutdown every join() call returns, and every worker has exited.
JoinReturns ==
    (sync.state = "shutdown") ~> (Freed /\ \A w \in Workers : Exited(w))

Asleep(w) == pc[w] \in WaitLabels /\ wf[w].e = "idle"
Awake(w)  == pc[w] \notin {"unborn", "exited"} /\ ~Asleep(w)

\* If work is queued and every worker there is sleeping, one is woken (or the
\* work is taken some other way, e.g. by the joiner's drain).
SleeperWoken ==
    ((queued > 0) /\ (\E w \in Workers : Asleep(w))
                  /\ (\A w \in Workers : ~Awake(w)))
      ~> (queued = 0 \/ \E w \in Workers : Awake(w))

\* Work conservation, as the contract states it.  Settled: nobody
\* is on the way to look at the queues - no thread is inside notify (or a
\* wake or spawn it makes), and every worker is running a task (not inside
\* its schedule()), blocked asleep on the idle event, or not spawned.  In
\* such a state a queued task waits for a worker that may never come: the
\* running tasks may each be waiting for it (a rendezvous, a pipeline), so
\* no worker may be asleep or unspawned then.  A liveness property cannot
\* say this: with tasks that return, the sleeping worker's task is run
\* eventually by a worker that finishes; only the state in between shows
\* that the pool ran fewer tasks at once than it could.  Spawn failures
\* (MaxFail > 0) and shutdown (join()'s drain) lie outside the promise.
Running(w) == pc[w] = "w_run"
Blocked(w) == pc[w] = "ew_sleep" /\ w \in sleepers["idle"]
Settled ==
    /\ \A c \in Clients : pc[c] \notin NotifyLabels \cup WakeLabels
    /\ \A w \in Workers : Running(w) \/ Blocked(w) \/ pc[w] = "unborn"
WorkConserving ==
    (sync.state # "shutdown" /\ Settled /\ queued > 0) => \A w \in Workers : Running(w)

Symmetry == Permutations(Workers)
=============================================================================
