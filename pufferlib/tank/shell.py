"""`puffertank run -- CMD` and `puffertank shell`: a container from the lib image, set up for research.

GPUs when the NVIDIA runtime is there (--gpus auto), shared memory sized for PyTorch, the current directory
bind-mounted at /workspace, the host user's UID/GID (files you create are yours), removed on exit. A
SIGTERM or SIGHUP (an SSH or Tailscale disconnect) or Ctrl-C is passed on to the command, which gets
--stop-timeout seconds to finish (`puffer train` saves its checkpoint) before the container is removed.
`-p 6006` publishes a port on the host's loopback (TensorBoard: `tensorboard --logdir runs --bind_all`
inside, http://localhost:6006 on the host; `tailscale serve --bg 6006` shares it with the tailnet).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path

import docker  # docker.errors comes with it

from pufferlib.tank import containers, variant
from pufferlib.tank.engine import get_client
from pufferlib.tank.errors import TankError, UsageError
from pufferlib.tank.names import UID_LABEL, image_ref


def _add_common(p: argparse.ArgumentParser) -> None:
    variant.add_argument(p, "which lib image")
    p.add_argument("--image", help="run this image instead of puffertank/lib:VARIANT")
    p.add_argument(
        "--gpus",
        choices=("auto", "all", "none"),
        default="auto",
        help="auto (default): all GPUs when the NVIDIA runtime is present; all: require them; none",
    )
    p.add_argument("--workspace", type=Path, default=None, help="mounted at /workspace (default: cwd)")
    p.add_argument("--no-workspace", action="store_true", help="mount nothing at /workspace")
    p.add_argument(
        "--user",
        default="host",
        help="host (default): your UID:GID; image: the image's user; or UID[:GID]",
    )
    p.add_argument(
        "--shm-size", help=f"size of the container's /dev/shm, e.g. 16g (default {containers.SHM_SIZE})"
    )
    p.add_argument(
        "--ipc-host",
        action="store_true",
        help="share the host's IPC namespace and /dev/shm instead of --shm-size",
    )
    p.add_argument("-e", "--env", action="append", default=[], metavar="KEY[=VALUE]", help="set a variable")
    p.add_argument(
        "--network",
        help="Docker network mode: none for an offline run, host for one node of a multi-node job",
    )
    p.add_argument(
        "--socket-ifname",
        metavar="IFACE",
        help="with --network host: the interface torch.distributed talks over, e.g. tailscale0 "
        "(sets NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME)",
    )
    p.add_argument(
        "-p",
        "--publish",
        action="append",
        default=[],
        metavar="[ADDR:]PORT[:CPORT]",
        help="publish container port CPORT (default PORT) on the host's ADDR:PORT (default address "
        "127.0.0.1), e.g. -p 6006 for `tensorboard --logdir runs --bind_all`; over Tailscale: "
        "`tailscale serve --bg 6006` on the host, or -p <tailscale IP>:6006",
    )
    p.add_argument("--timeout", type=float, help="kill the container after this many seconds")
    p.add_argument(
        "--stop-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds the command gets after Ctrl-C, SIGTERM or SIGHUP before it is killed (default 10)",
    )


def register(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser(
        "run",
        help="run a command in the lib image (removed on exit)",
        description="Run CMD in puffertank/lib:VARIANT with the workspace mounted; remove it after.",
        usage="puffertank run [options] -- CMD [ARG...]",
    )
    _add_common(run)
    run.add_argument(
        "--tty",
        choices=("auto", "yes", "no"),
        default="auto",
        help="attach a terminal (auto: if ours is)",
    )
    run.add_argument("cmd", nargs=argparse.REMAINDER, help="the command, after --")
    run.set_defaults(func=cmd_run)

    shell = sub.add_parser(
        "shell",
        help="an interactive shell in the lib image (removed on exit)",
        description="Open bash in puffertank/lib:VARIANT with the workspace mounted; removed on exit.",
    )
    _add_common(shell)
    shell.set_defaults(func=cmd_shell)


def resolve_user(value: str) -> str | None:
    """--user: 'host' -> the caller's UID:GID, 'image' -> None (the image's user), else UID[:GID]."""
    if value == "image":
        return None
    if value == "host":
        return f"{os.getuid()}:{os.getgid()}"
    uid, _, gid = value.partition(":")
    if not uid.isdigit() or (gid and not gid.isdigit()):
        raise UsageError(
            f"--user {value!r}: not host, image or a numeric UID[:GID]",
            "e.g. --user host or --user 1000:1000",
        )
    return value


def parse_env(items: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not key:
            raise UsageError(
                f"--env {item!r}: no variable name", "pass -e KEY=VALUE, or -e KEY to pass on yours"
            )
        if not eq:
            if key not in os.environ:
                raise UsageError(
                    f"--env {key}: not set here, so there is no value to pass on", f"pass -e {key}=VALUE"
                )
            value = os.environ[key]
        env[key] = value
    return env


def parse_publish(items: list[str]) -> dict[str, tuple[str, int]]:
    """-p values as the Docker SDK's ports: '6006' -> {'6006/tcp': ('127.0.0.1', 6006)}; '8080:6006',
    '0.0.0.0:6006' and '100.64.0.7:8080:6006' as `docker run -p` reads them. Loopback by default:
    TensorBoard has no login, so it is not offered to the whole network unless asked."""
    ports: dict[str, tuple[str, int]] = {}
    for item in items:
        parts = item.split(":")
        address = "127.0.0.1"
        if len(parts) == 3 or (len(parts) == 2 and "." in parts[0]):
            address = parts.pop(0)
        try:
            host_port = int(parts[0])
            container_port = int(parts[1]) if len(parts) > 1 else host_port
        except (ValueError, IndexError):
            raise UsageError(
                f"--publish {item!r}: not a port", "pass -p PORT, -p HOSTPORT:PORT or -p ADDR:HOSTPORT:PORT"
            ) from None
        if not (0 < host_port < 65536 and 0 < container_port < 65536) or not address:
            raise UsageError(
                f"--publish {item!r}: ports are 1-65535",
                "pass -p PORT, -p HOSTPORT:PORT or -p ADDR:HOSTPORT:PORT",
            )
        ports[f"{container_port}/tcp"] = (address, host_port)
    return ports


def multi_node_env(network: str | None, ifname: str | None) -> dict[str, str]:
    """--socket-ifname IFACE: the variables that make NCCL and gloo use IFACE (both, or a rank
    advertises an address the other nodes cannot reach). Only with the host's network, where the
    host's interfaces (tailscale0) are the container's; the interface must exist on a local engine."""
    if not ifname:
        return {}
    if network != "host":
        raise UsageError(
            f"--socket-ifname {ifname} needs --network host (in Docker's network there is no {ifname})",
            f"puffertank run --network host --socket-ifname {ifname} -- ...",
        )
    local = os.environ.get("DOCKER_HOST", "unix://").startswith("unix://")
    if local and not Path("/sys/class/net", ifname).exists():
        names = ", ".join(sorted(p.name for p in Path("/sys/class/net").iterdir())) or "none"
        raise TankError(
            f"--socket-ifname {ifname}: no such network interface on this host (it has {names})",
            "for Tailscale: sudo tailscale up, then --socket-ifname tailscale0",
        )
    return {"NCCL_SOCKET_IFNAME": ifname, "GLOO_SOCKET_IFNAME": ifname}


def check_options(args: argparse.Namespace) -> None:
    """Options otherwise first met at the engine (--shm-size, the timeouts, --workspace), checked now."""
    if args.shm_size is not None:
        try:
            valid = docker.utils.parse_bytes(args.shm_size) > 0
        except docker.errors.DockerException:
            valid = False
        if not valid:
            raise UsageError(
                f"--shm-size {args.shm_size!r}: not a size", "a number with b, k, m or g, e.g. --shm-size 16g"
            )
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout {args.timeout:g}: must be more than 0 seconds", "e.g. --timeout 3600")
    if not args.stop_timeout >= 0:
        raise UsageError(
            f"--stop-timeout {args.stop_timeout:g}: must be 0 seconds or more", "e.g. --stop-timeout 30"
        )
    if args.workspace is not None and not args.no_workspace and not args.workspace.expanduser().is_dir():
        raise UsageError(
            f"--workspace {args.workspace}: not a directory", "pass an existing folder, or --no-workspace"
        )


def make_spec(args: argparse.Namespace, command: list[str]) -> containers.RunSpec:
    """The run's RunSpec from the command line, every option checked (UsageError); asks no engine."""
    check_options(args)
    image = args.image or image_ref("lib", variant.resolve(args.variant))
    env = {**multi_node_env(args.network, getattr(args, "socket_ifname", None)), **parse_env(args.env)}
    ports = parse_publish(args.publish)
    if ports and args.network in ("none", "host"):
        raise UsageError(
            f"--publish with --network {args.network}: nothing can be published",
            "drop --network, or drop --publish (with --network host the ports are the host's already)",
        )
    if "TERM" in os.environ:
        env.setdefault("TERM", os.environ["TERM"])
    spec = containers.RunSpec(
        image=image,
        command=command,
        workspace=None if args.no_workspace else (args.workspace or Path.cwd()),
        user=resolve_user(args.user),
        gpus=args.gpus,
        shm_size=args.shm_size,
        ipc_host=args.ipc_host,
        env=env,
        labels={"puffertank.command": args.command},
        timeout=args.timeout,
        network=args.network,
        stop_timeout=args.stop_timeout,
        ports=ports,
    )
    if args.network == "host":  # the host's name, as its network is: torchrun and Ray advertise it
        spec.hostname = socket.gethostname()
    return spec


def _note_uid_mismatch(client, spec: containers.RunSpec) -> None:
    """Running as a UID other than the image's user works, but the venv is then read-only: say so once."""
    if not spec.user or spec.user.split(":")[0] == "0":
        return
    try:
        built_uid = client.images.get(spec.image).labels.get(UID_LABEL)
    except docker.errors.DockerException:
        return
    uid = spec.user.split(":")[0]
    if built_uid and built_uid != uid:
        print(
            f"puffertank: note: you are UID {uid} but the image's user is UID {built_uid}, so /opt/venv is "
            f"read-only here (pip install --user still works). To match: puffertank build --uid {uid} "
            f"--gid {os.getgid()}",
            file=sys.stderr,
        )


def _fix_for(args: argparse.Namespace) -> str:
    if args.image:
        return f"docker pull {args.image}"
    return f"puffertank build --variant {variant.resolve(args.variant)}"


def cmd_run(args: argparse.Namespace) -> int:
    command = list(args.cmd)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError(
            "no command. Usage: puffertank run [options] -- CMD [ARG...]", "for a shell: puffertank shell"
        )
    spec = make_spec(args, command)
    client = get_client(timeout=600)
    _note_uid_mismatch(client, spec)
    interactive = args.tty == "yes" or (args.tty == "auto" and sys.stdin.isatty() and sys.stdout.isatty())
    if interactive:
        return containers.run_interactive(client, spec, _fix_for(args))
    return containers.run_streamed(client, spec, _fix_for(args))


def cmd_shell(args: argparse.Namespace) -> int:
    spec = make_spec(args, ["bash"])
    client = get_client(timeout=600)
    _note_uid_mismatch(client, spec)
    return containers.run_interactive(client, spec, _fix_for(args))
