"""What root made under MYAPP_HOME becomes the platform user's at start (myapp/host/platform_user.py): by
descriptor, never through a link, never a file with a second name, never a project's; also while a project's
uid swaps a folder of its own for a link to a folder of root's outside."""
from __future__ import annotations

import os
import pwd
import time

from tests.fs import attackers


def test_root_made_files_change_hands_and_nothing_else(tmp_path):
    from myapp.backends.local import sandbox
    from myapp.host import platform_user

    account = platform_user.ensure(platform_user.DEFAULT_USER)
    project = sandbox.uid_base() + 11
    home, outside = tmp_path / "home", tmp_path / "outside"
    (home / "jobs" / "proj" / "attempt" / ".myapp").mkdir(parents=True)
    outside.mkdir()
    (outside / "root.txt").write_text("root's")
    (home / "db.sqlite").write_text("db")
    (home / "jobs" / "proj" / "attempt" / ".myapp" / "state.json").write_text("{}")
    (home / "jobs" / "proj" / "attempt" / "model.bin").write_text("the job's")
    os.chown(home / "jobs" / "proj" / "attempt", project, project)
    os.chown(home / "jobs" / "proj" / "attempt" / "model.bin", project, project)
    os.symlink(outside / "root.txt", home / "jobs" / "proj" / "attempt" / "link")
    os.link(outside / "root.txt", home / "second-name")
    platform_user.hand_over(home, account)

    def owner(path):
        return os.lstat(path).st_uid

    assert owner(home) == owner(home / "db.sqlite") == owner(home / "jobs" / "proj") == account.pw_uid
    assert owner(home / "jobs" / "proj" / "attempt" / ".myapp" / "state.json") == account.pw_uid
    assert owner(home / "jobs" / "proj" / "attempt") == owner(home / "jobs" / "proj" / "attempt" / "model.bin") \
        == project
    assert owner(home / "jobs" / "proj" / "attempt" / "link") == account.pw_uid  # the link itself, as a name
    assert owner(outside / "root.txt") == owner(outside) == 0  # not through the link, nor its second name
    assert owner(home / "second-name") == 0


def test_a_folder_swapped_for_a_link_while_handing_over_leaves_roots_folder_alone(tmp_path):
    from myapp.host import platform_user

    account = platform_user.ensure(platform_user.DEFAULT_USER)
    home, outside = tmp_path / "home", tmp_path / "outside"
    attempt = home / "jobs" / "proj" / "attempt"
    (attempt / "decoy" / "inner").mkdir(parents=True)
    (outside / "inner").mkdir(parents=True)
    (outside / "inner" / "root.txt").write_text("root's")
    seconds = min(attackers.RACE_SECONDS, 3)
    attacker = attackers.start(attackers.SWAP_LINKS, attempt, outside, str(seconds))
    deadline, rounds = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        for path in (home, attempt / "decoy", attempt / "decoy" / "inner"):  # root's again, for the next round
            try:
                os.chown(path, 0, 0, follow_symlinks=False)
            except FileNotFoundError:
                pass
        platform_user.hand_over(home, account)
        rounds += 1
    assert attackers.swaps(attacker) > 0 and rounds > 0
    for path in (outside, outside / "inner", outside / "inner" / "root.txt"):
        assert os.lstat(path).st_uid == 0, path
    assert pwd.getpwuid(account.pw_uid).pw_name == platform_user.DEFAULT_USER


def test_a_missing_platform_user_is_made_once_even_by_two_starts_at_once():
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    from myapp.host import platform_user

    name = f"myapp-t{os.getpid() % 100000}"
    try:
        with ThreadPoolExecutor(2) as pool:  # two platforms started together on a new machine
            made = list(pool.map(platform_user.ensure, [name, name]))
        assert made[0].pw_uid == made[1].pw_uid and made[0].pw_uid < 1000  # a system user
        assert made[0].pw_shell == "/usr/sbin/nologin" and made[0].pw_dir == "/nonexistent"
        import grp

        assert grp.getgrgid(made[0].pw_gid).gr_name == name  # a group of its own (Celery checks the gid's name)
    finally:
        subprocess.run(["userdel", name], capture_output=True)
