"""A command run as a user that is not root, as an instructor's own grader (or a pod's, or a
Slurm task's) runs: `as_user`. Needs root, to become that user."""
import os
import sys
from pathlib import Path

USER = 65534      # nobody


def as_user(args: list[str], course_root: Path, home: Path, user: int = USER) -> list[str]:
    """`args` run as `user`, the course and a home of its own handed to it; where this
    Python lives in a folder `user` may not enter (a root's pyenv under /root), that folder
    is made passable in a mount namespace of the command's own, this machine unchanged."""
    for path in [course_root, *course_root.rglob("*"), home]:
        os.lchown(path, user, user)
    blocked = next((p for p in reversed(Path(sys.base_prefix).resolve().parents)
                    if p != Path("/") and not os.stat(p).st_mode & 0o001), None)
    drop = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"]
    if blocked is None:
        return drop + args
    inside = Path(sys.base_prefix).resolve().relative_to(blocked)
    stash = "/run/autograd-lab-unprivileged-stash"
    script = (f'mkdir -p {stash} && mount --bind "$1" {stash} && '
              'mount -t tmpfs -o mode=0755 tmpfs "$1" && mkdir -p "$1/$2" && '
              f'mount --bind "{stash}/$2" "$1/$2" && shift 2 && exec "$@"')
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
            str(blocked), str(inside), *drop, *args]
