"""Profiles that ship with cuzk-fastcpu (see :func:`cuzk_fastcpu.profile_path`)."""
