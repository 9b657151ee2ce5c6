"""``t2hx reproduce``: the main job on the embedded simulated cluster (see t2hx.reproduce).

Routing analysis of every plane and engine, the quick study (``--profile paper``: what the
claims need at the paper's scales, into ``log/paper-scale``; ``--full``: the whole matrix)
through ReFrame on the ``sim`` system, figures and report into ``paper/``, then the Fig 1
checks and the comparison with the campaign's previous complete run. Extra ReFrame options
follow ``--``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from t2hx import argtypes as A

if TYPE_CHECKING:
    from t2hx.study import Study


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reproduce", help="run the study on the embedded simulated cluster",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--system", default=None, type=A.system,
                   help="system conf (default: the study's own systems, t2hx for seed 000's)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--full", action="store_true",
                     help="the whole study matrix instead of the quick profile")
    how.add_argument("--profile", default=None, type=A.name,
                     help="a profile of the study, e.g. paper (seed 000's scales; "
                     "default campaign log/paper-scale)")
    p.add_argument("--campaign", default=None, type=A.name,
                   help="log/<campaign> (default: the study's log of the profile, its "
                   "logs: — seed 000's reference, paper-scale with --profile paper — else "
                   "<study>-<profile>)")
    p.add_argument("--out", type=A.as_path(A.output_dir), default=None,
                   help="figures and report (default: paper/ for the reference campaign, "
                   "else log/<campaign>/paper)")
    p.add_argument("--study", default=None, type=A.text_line,
                   help="a study of conf/studies/ (default: $T2HX_STUDY or "
                   "hyperx-vs-fattree-sc19)")
    p.add_argument("--analysis-only", action="store_true",
                   help="only step 1: the routing analysis of every plane and engine into "
                   "log/<campaign>/analysis/ (e.g. after a new analysis field; the "
                   "campaign's runs are left alone)")
    p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no progress output")
    p.add_argument("reframe_args", nargs=argparse.REMAINDER,
                   help="after --: more reframe options, e.g. -- -n MPIGraph")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from t2hx.conf import load_system, system_path
    from t2hx.errors import T2hxError
    from t2hx.paths import log_root, work_root
    from t2hx.reframe_site import NAME_RE
    from t2hx.reproduce import Options, reproduce
    from t2hx.study import load_study

    profile = args.profile or ("full" if args.full else "quick")
    study = load_study(args.study)
    campaign = args.campaign or default_campaign(study, profile)
    if not NAME_RE.match(campaign):
        raise T2hxError(f"campaign name {campaign!r}", field="--campaign",
                        fix="use letters, digits, '-' and '_' only")
    check_log_study(log_root() / campaign, study.name)
    # The systems the study was written for, all of them, unless --system names one.
    names = study.own_systems() if args.system is None else [args.system]
    systems = [load_system(system_path(n)) for n in names]
    opts = Options(system=systems[0], also=systems[1:],
                   profile=profile, campaign=campaign,
                   out=args.out, logs=log_root(), work=work_root(), quiet=args.quiet,
                   reframe_args=[a for a in args.reframe_args if a != "--"],
                   study=args.study)
    if args.analysis_only:
        from t2hx.reproduce import analysis_only

        return analysis_only(opts)
    return reproduce(opts)


def default_campaign(study: Study, profile: str) -> str:
    """The study's committed log of that profile (its ``logs:``), else one named after both
    (never another study's log)."""
    return study.logs.get(profile) or f"{study.name}-{profile}"


def check_log_study(logdir: Path, study: str) -> None:
    """A log holds one study's campaign: resuming or replacing it with another study's
    would mix (or discard) the other's runs."""
    import json

    from t2hx.errors import T2hxError

    path = logdir / "provenance.json"
    try:
        recorded = json.loads(path.read_text()).get("study")
    except (OSError, ValueError):
        return          # no log yet (or none readable): nothing to mix with
    if recorded and recorded != study:
        raise T2hxError(f"log/{logdir.name} holds a campaign of study '{recorded}', not "
                        f"'{study}'", file=str(path), field="study",
                        fix="name another log with --campaign")
