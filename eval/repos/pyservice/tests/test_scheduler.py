from stockroom.jobs.scheduler import Job, Scheduler


def test_due_jobs_run_and_failures_are_isolated() -> None:
    now = [0.0]
    calls: list[str] = []

    def boom() -> None:
        raise RuntimeError("boom")

    jobs = [Job("ok", 10, lambda: calls.append("ok")), Job("broken", 10, boom)]
    scheduler = Scheduler(jobs, clock=lambda: now[0], jitter=0)
    assert scheduler.run_pending() == 2
    assert calls == ["ok"]
    assert jobs[1].failures == 1 and "boom" in (jobs[1].last_error or "")
    now[0] = 5
    assert scheduler.run_pending() == 0
    now[0] = 10
    assert scheduler.run_pending() == 2
