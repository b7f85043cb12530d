"""The GPU driver layer both GPU backends share: every hook written once over a thin adapter."""
