"""Routing: everything between a built fabric and its forwarding tables (docs/routing.md).

* :mod:`~t2hx.routing.opensm` runs the stock OpenSM (and our plugin engines) under ibsim;
* :mod:`~t2hx.routing.cache` keeps one routing run per conf, fabric and input;
* :mod:`~t2hx.routing.lft` reads OpenSM's dumps into forwarding tables and paths;
* :mod:`~t2hx.routing.analysis` measures them (hops, EFI, dark fiber, deadlock freedom);
* :mod:`~t2hx.routing.parx` is the PARX/SAR geometry (quadrants, LID policy, Table 1);
* :mod:`~t2hx.routing.demand` reads and writes demand and job files;
* :mod:`~t2hx.routing.reroute` re-routes a plane before a PARX/SAR job, locally under ibsim
  or on the cluster's OpenSM host (:mod:`~t2hx.routing.remote`).
"""
