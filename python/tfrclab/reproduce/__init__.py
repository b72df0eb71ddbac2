"""``tfrclab reproduce``: the papers' figures and tables, rerun and checked against their claims.

- :mod:`tfrclab.reproduce.claims`: a claim (paper value, how measured, tolerance) and its
  verdict;
- :mod:`tfrclab.reproduce.registry`: the experiments by id, with their runs and claims (defined
  per paper: :mod:`tfrclab.reproduce.floyd2000`, and floyd2000's queue and response
  dynamics in :mod:`tfrclab.reproduce.floyd2000_dynamics`);
- :mod:`tfrclab.reproduce.runner`: runs an experiment (resumable sweeps), evaluates its claims;
- :mod:`tfrclab.reproduce.falsify`: whether contrary data (the runs' numbers perturbed) would
  have moved each claim's verdict;
- :mod:`tfrclab.reproduce.report`: ``report.md`` and a self-contained ``report.html``;
- :mod:`tfrclab.reproduce.cli`: the ``tfrclab reproduce`` command.

Nothing is imported here, so that the ``tfrclab`` command starts without numpy or pandas.
"""
