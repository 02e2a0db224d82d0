"""Who may do what, through the browser: an admin creates a user on the Users page (a short password is
refused, a generated one is shown once); a project's owner adds them as viewer on the Members page (after
a username nobody has is refused, and is told they cannot demote themselves, the last owner); the viewer
sees the members read-only; the owner makes them developer; the admin deactivates them, which ends their
session and refuses their next sign-in.
Screenshots: test-artifacts/e2e/test_members_and_users/{admin,owner,member}/."""
from __future__ import annotations

import re
import uuid

import pytest

from tests.e2e.support import Page, sign_in
from tests.support import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes


def unexpected(errors: list[str], *statuses: int) -> list[str]:
    """Console errors, except chromium's note of an answer with one of these statuses (provoked on purpose)."""
    return [e for e in errors if not any(
        e.startswith("Failed to load resource") and f"status of {status} (" in e for status in statuses)]


NAME = "test_members_and_users"


def test_members_and_users(platform, browser, tab):
    suffix = uuid.uuid4().hex[:6]
    newcomer, owner_name, project_name = f"grace-{suffix}", f"olive-{suffix}", f"team-{suffix}"

    # The project's owner, set up through the API: the last (only) owner of a fresh project.
    owner = platform.api("POST", "/api/v1/user/", json={
        "username": owner_name, "first_name": "Olive", "last_name": "Owner", "email": f"{owner_name}@example.org",
        "generate_password": True})
    project = platform.api("POST", "/api/v1/project/", json={"name": project_name})
    platform.api("POST", f"/api/v1/project/{project['id']}/members", json={"username": owner_name, "role": "owner"})
    members = platform.api("GET", f"/api/v1/project/{project['id']}/members")["items"]
    mine = next(m for m in members if m["username"] == "admin")
    platform.api("DELETE", f"/api/v1/project/{project['id']}/members/{mine['id']}")

    # ---- the admin creates the user ---------------------------------------------------------------------
    admin = tab
    admin.folder = admin.folder / "admin"
    admin.folder.mkdir(parents=True, exist_ok=True)
    page = admin.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Users").click()
    page.wait_for_url(re.compile(r".*/ui/users$"))
    page.get_by_role("row").filter(has_text=owner_name).wait_for()
    page.get_by_role("button", name="New user").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Username").fill(newcomer)
    dialog.get_by_label("First name").fill("Grace")
    dialog.get_by_label("Last name").fill("Hopper")
    dialog.get_by_label("Email").fill(f"{newcomer}@example.org")
    dialog.get_by_label("Set a password").check()
    dialog.get_by_label("Password to set").fill("too-short")
    dialog.get_by_role("button", name="Create").click()
    error = dialog.locator(".field-error")
    error.wait_for()
    assert "at least 12 characters" in error.inner_text()
    assert dialog.get_by_label("Password to set").get_attribute("aria-invalid") == "true"
    admin.shot("password-refused")
    dialog.get_by_label("Generate one").check()
    dialog.get_by_role("button", name="Create").click()
    shown = dialog.get_by_label(f"Generated password of {newcomer}")
    shown.wait_for()
    password = shown.inner_text().strip()
    assert len(password) >= 12
    admin.shot("password-shown-once")
    dialog.get_by_role("button", name="Done").click()
    dialog.wait_for(state="detached")
    row = page.get_by_role("row").filter(has_text=newcomer)
    row.get_by_text("active", exact=True).wait_for()
    # An admin cannot deactivate themselves: the button says why it is disabled.
    me = page.get_by_role("row").filter(has=page.get_by_text("(you)"))
    assert me.get_by_role("button", name=re.compile("^Deactivate admin$")).is_disabled()
    assert "cannot deactivate yourself" in me.get_by_role("button", name="Deactivate admin").get_attribute("title")
    assert password not in page.content(), "the generated password is still on the page"
    admin.shot("users")

    # ---- the owner adds them as viewer ------------------------------------------------------------------
    owner_tab = Page(browser, f"{NAME}/owner")
    page = owner_tab.page
    sign_in(page, platform.base, owner_name, owner["generated_password"])
    assert page.get_by_role("link", name="Users").count() == 0, "non-admins see the Users link"
    page.get_by_role("link", name="Members").click()
    page.wait_for_url(re.compile(r".*/ui/members$"))
    page.get_by_role("heading", name=re.compile(f"Members of {project_name}")).wait_for()
    form = page.get_by_role("form", name="Add a member")
    form.get_by_label("Username").fill(f"nobody-{suffix}")
    form.get_by_role("button", name="Add member").click()
    form.locator(".field-error").filter(has_text="no user named").wait_for()
    assert form.get_by_label("Username").get_attribute("aria-invalid") == "true"
    form.get_by_label("Username").fill(newcomer)
    form.get_by_label("Role").select_option("viewer")
    form.get_by_role("button", name="Add member").click()
    page.get_by_role("status").filter(has_text=f"Added {newcomer} as viewer").wait_for()
    assert page.get_by_label(f"Role of {newcomer}").input_value() == "viewer"
    owner_tab.shot("added-viewer")
    # The last owner cannot demote themselves: the server's reason is shown at their role.
    page.get_by_label(f"Role of {owner_name}").select_option("developer")
    refusal = page.locator(f"tr[data-member='{owner_name}'] .field-error")
    refusal.wait_for()
    assert "last owner" in refusal.inner_text()
    assert page.get_by_label(f"Role of {owner_name}").input_value() == "owner"
    owner_tab.shot("last-owner-refused")

    # ---- the viewer sees the members, read-only ---------------------------------------------------------
    member_tab = Page(browser, f"{NAME}/member")
    page = member_tab.page
    sign_in(page, platform.base, newcomer, password)
    page.get_by_role("link", name="Members").click()
    page.get_by_role("heading", name=re.compile(f"Members of {project_name}")).wait_for()
    note = page.locator("#members-readonly-reason")
    assert "Only owners" in note.inner_text() and "your role here is viewer" in note.inner_text()
    form = page.get_by_role("form", name="Add a member")
    for control in (form.get_by_label("Username"), form.get_by_label("Role"),
                    form.get_by_role("button", name="Add member"),
                    page.get_by_label(f"Role of {owner_name}"), page.get_by_label(f"Role of {newcomer}"),
                    page.get_by_role("button", name=f"Remove {owner_name}")):
        assert control.is_disabled(), control
    assert "members-readonly-reason" in page.get_by_label(f"Role of {owner_name}").get_attribute("aria-describedby")
    assert page.get_by_role("link", name="Users").count() == 0
    member_tab.shot("read-only")
    page.goto(f"{platform.base}/ui/users")
    page.get_by_role("alert").filter(has_text="Only administrators").wait_for()

    # ---- the owner makes them developer -----------------------------------------------------------------
    page = owner_tab.page
    page.get_by_label(f"Role of {newcomer}").select_option("developer")
    page.get_by_role("status").filter(has_text=f"{newcomer} is now developer").wait_for()
    assert refusal.count() == 0, "the earlier refusal is still shown"
    owner_tab.shot("now-developer")
    page = member_tab.page
    page.goto(f"{platform.base}/ui/members")
    page.locator("#members-readonly-reason").filter(has_text="your role here is developer").wait_for()
    assert page.get_by_label(f"Role of {newcomer}").input_value() == "developer"

    # ---- the admin deactivates them: their session ends, and they cannot sign in again -------------------
    page = admin.page
    page.get_by_role("button", name=f"Deactivate {newcomer}").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("button", name="Deactivate").click()
    dialog.wait_for(state="detached")
    page.get_by_role("row").filter(has_text=newcomer).get_by_text("deactivated").wait_for()
    admin.shot("deactivated")

    page = member_tab.page
    page.goto(f"{platform.base}/ui/members")
    page.wait_for_url(re.compile(r".*/ui/login.*"))
    page.get_by_label("Username").fill(newcomer)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("alert").filter(has_text="Invalid username or password").wait_for()
    member_tab.shot("sign-in-refused")

    assert unexpected(admin.errors) == [], admin.errors
    assert unexpected(owner_tab.errors, 404, 409) == [], owner_tab.errors
    assert unexpected(member_tab.errors, 401) == [], member_tab.errors
    owner_tab.context.close()
    member_tab.context.close()


HOLD = """
name: hold
project: {project}
tasks:
  - name: wait
    template: python
    args: {{script: "import time; time.sleep(600)"}}
"""


def test_an_owner_deletes_a_project_with_its_running_work(platform, tab):
    """The owner of a project (their only one; creating it in the UI is in test_first_week.py) deletes it
    while a run of it runs: the dialog lists the run, and its job is stopped and removed, not left running
    unowned."""
    suffix = uuid.uuid4().hex[:6]
    name, project_name = f"nina-{suffix}", f"lab-{suffix}"
    user = platform.api("POST", "/api/v1/user/", json={
        "username": name, "first_name": "Nina", "last_name": "New", "email": f"{name}@example.org",
        "generate_password": True})
    project = platform.api("POST", "/api/v1/project/", json={"name": project_name})
    platform.api("POST", f"/api/v1/project/{project['id']}/members", json={"username": name, "role": "owner"})
    page = tab.page
    sign_in(page, platform.base, name, user["generated_password"])
    assert page.get_by_label("Project").locator("option:checked").inner_text() == f"{project_name} (owner)"

    pipeline = platform.api("POST", "/api/v1/pipeline/import", json={"yaml": HOLD.format(project=project_name)})
    run = platform.api("POST", "/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]})
    attempts = f"/api/v1/task_run/?pipeline_run_id={run['id']}"
    wait_until(lambda: [a for a in platform.api("GET", attempts)["items"] if a["state"] == "running"],
               timeout=90, interval=1, what="the run's task to run")
    job = platform.api("GET", attempts)["items"][0]["backend_ref"]
    folder = platform.home / "jobs" / job["namespace"] / job["job_name"]
    assert folder.is_dir()

    page.get_by_label("Project").select_option(label="All projects…")
    page.wait_for_url(re.compile(r".*/ui/projects$"))
    row = page.locator(f"tr[data-project='{project_name}']")
    row.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog", name=f"Delete project {project_name}?")
    work = dialog.get_by_role("group", name="Running work")
    work.wait_for()
    assert f"1 run: hold run #{run['id']} (running)" in work.inner_text()
    tab.shot("delete-lists-running-work")
    dialog.get_by_role("button", name="Stop everything and delete").click()
    page.get_by_role("status").filter(has_text=f"Deleted project {project_name}").wait_for()
    # none left to work in: the switcher says so
    page.get_by_label("Project").locator("option:checked", has_text="no project").wait_for(state="attached")
    wait_until(lambda: not folder.exists(), timeout=60, interval=1, what="the deleted project's job to be removed")
    tab.shot("deleted")
    assert unexpected(tab.errors) == [], tab.errors
