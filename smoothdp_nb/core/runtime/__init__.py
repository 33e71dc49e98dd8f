"""The plumbing under both halves: CPUs, executors, sweeps, budgets, progress, display hooks.

:mod:`.parallel` says how much CPU this process may use and sizes thread and process pools;
:mod:`.executors` runs tasks on any ``concurrent.futures`` executor with a progress bar;
:mod:`.sweeps` is the one home of :func:`~.sweeps.sweep` and :func:`~.sweeps.monte_carlo_map`
(their grid, their table and chunked Monte Carlo);
:mod:`.budget` refuses work that would be too large before it starts; :mod:`.progress` draws
progress bars without the notebook stack; :mod:`.rendering` is the registry through which result
objects find their charts (the display layer registers itself there).

May import: numpy, the standard library and :mod:`smoothdp_nb.core.numerics`. No science here.
"""
