"""Host-side tooling (`puffertank`): build the image chain, run containers, the matrix, doctor.

Runs on the host, talks to Docker through the Docker SDK (and a BuildKit-capable CLI for builds).
Never imports torch or the environment packages.
"""
