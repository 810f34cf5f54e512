"""A run's life around the PPO loop: its directory (rundir), checkpoints and which to keep (checkpoint),
continuing one (resume), how it ends on a fault (failure) or a signal (signals), what it reports
(tracking, dashboard) and the videos it records (video, video_hook)."""
