"""Several machines on one plan through its git remote (SPEC §12 "Across machines").

With ``[workers] remote = "origin"`` git is the coordination engine; there is no
Memento server. Every push names what it expects to replace (``--atomic`` with a
``--force-with-lease`` per ref), so nothing a person pushed is ever overwritten: a
rejected push is fetched, rebased and tried again. Without a remote every function
the tick calls returns at once (today's tick).

Where each step of SPEC §12 lives:

=====================================================  ==========================
step                                                   module
=====================================================  ==========================
this host for one tick: the claims it holds, the       host.py (:class:`Fleet`,
remote and branch, the documents' paths                :func:`enabled`)
the remote itself: fetch, the leased atomic push,      remote.py (:func:`push`,
a refusal (:class:`PushRefused`), a push without an    :func:`landed`)
answer settled by reading the remote's refs, the
back-off after lost races
before each pick: fetch, fast-forward or rebase this   sync.py (:func:`sync`,
host's commits, push them; the documents at the end    :func:`finish`)
of a tick
the rebase: git's, or the commits replayed in memory   integrate.py
and HEAD moved after the push; a killed replay
finished
Memento's documents across hosts: committed before a   docs.py, plan_merge.py
sync, merged in a rebase (plan, status log, notes)
pick and claim by compare-and-swap; a lost race picks  pick.py (:func:`pick`)
again
a claim commit marking the task ``[~]``, its           claims.py (:func:`claim`,
heartbeat ref ``refs/memento/claims/<ID>`` beaten      :func:`start_beating`)
every 60 s
a claim of several tasks while pushes contend; any     batch.py
free task of a parallel phase at random
the result pushed the same way, rebasing on            publish.py
rejection, its claim ref deleted in the same push,     (:func:`publish`)
the next claim chained on it
a ``[~]`` task whose heartbeat ref is older than       stale.py
``stale_lock_timeout`` taken over (a retry counted)    (:func:`take_over_stale`)
results that cannot land: claims held across ticks     pending.py
(``.memento/fleet_pending.json``), a claim lost, a
conflict, a claim never attempted given back
=====================================================  ==========================

The tick (tick/run.py, the architect) calls the fleet through calls.py, the few
names it needs, which imports a module only when there is a remote (this file imports
none: import each name from its module); doctor reads remote.read_refusal. A module imports only those
before it in this order: host, remote, plan_merge, docs, integrate, pending, then
claims, stale and batch (none of the three imports another), publish, sync, pick
(an import-linter contract in pyproject.toml holds it).
"""
