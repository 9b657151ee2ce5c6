"""Post-processing: raw benchmark outputs and ReFrame perflogs → tidy tables → figures, report.

Data flow (one direction, each stage reads and writes files):

    log/<campaign>/  ──ingest──►  <out>/data/results.{parquet,csv}   (tidy, one row per value)
                                  <out>/data/matrices.{parquet,csv}  (mpiGraph sender×receiver)
                     ──stats/gain──►  figures' data files (<out>/figures/*.dat) ──gnuplot──► PNG+PDF
                     ──report──►  <out>/report.md, report.html

Modules: ``parsers/`` (one per benchmark family), ``records`` (record shape, the agreed
walltime line, the simulated-output header), ``perflog`` (the ReFrame perflog format),
``ingest``, ``store`` (deterministic table writing), ``stats``, ``gain``, ``plots`` (gnuplot
runner), ``figures``, ``routing`` (fabric-engine analysis files), ``report``, ``replay``.
"""
