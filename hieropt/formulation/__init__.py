"""The solvers' problems, as Pyomo models and as the numpy arrays the LP back-ends load: the
performance LP on t = 1/B (:mod:`.arrays`), the single-term rate LP (:mod:`.rate`), the
procurement LP in cost shares (:mod:`.ratio`, compiled by :mod:`.ratio_arrays` with its time rows
from :mod:`.ratio_time_rows`), the portfolio LP (:mod:`.portfolio`, arrays only), the LP's units
(:mod:`.scale`) and the provisioning MILP (:mod:`.milp`). They build models from a time model;
they open no file and solve nothing."""
