"""Fabric engine: topology generators, ibsim netfiles, real OpenSM routing, LFT tables."""
