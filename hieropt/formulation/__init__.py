"""The Pyomo models: the cutting-plane LP (:mod:`.lp`) and the provisioning MILP (:mod:`.milp`).
They build models from a time model; they open no file and solve nothing."""
