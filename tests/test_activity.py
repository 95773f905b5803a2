"""Activity records and the recorder that forwards them."""

from __future__ import annotations

import uuid

import pytest

from szrag.base.activity import Activity, ActivityRecorder, now_ms


def test_activity_has_a_uuid_and_a_millisecond_timestamp() -> None:
    before = now_ms()
    activity = Activity(stage="retrieval", status="completed", message="Found 2 sources")

    assert uuid.UUID(activity.id).version == 4
    assert before <= activity.timestamp <= now_ms()
    assert Activity(stage="ai", status="started", message="x").id != activity.id


def test_to_dict_uses_the_spec_keys() -> None:
    activity = Activity(
        id="a",
        timestamp=5,
        stage="tool",
        status="completed",
        message="getStatus ran",
        activity_id="pair",
        metadata={"tool": "getStatus"},
    )

    assert activity.to_dict() == {
        "id": "a",
        "timestamp": 5,
        "type": "tool",
        "stage": "tool",
        "status": "completed",
        "message": "getStatus ran",
        "activityId": "pair",
        "metadata": {"tool": "getStatus"},
    }


def test_optional_fields_are_left_out_when_absent() -> None:
    record = Activity(stage="context", status="skipped", message="m").to_dict()

    assert "activityId" not in record
    assert "metadata" not in record


def test_a_kind_replaces_the_stage_as_type() -> None:
    record = Activity(stage="tool", status="completed", message="m", kind="api_request").to_dict()

    assert (record["type"], record["stage"]) == ("api_request", "tool")


def test_unknown_stage_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown activity stage"):
        Activity(stage="retreival", status="completed", message="typo")


async def test_recorder_forwards_to_a_sync_callback_as_created() -> None:
    seen: list[str] = []
    recorder = ActivityRecorder(lambda activity: seen.append(activity.message))

    await recorder.record("retrieval", "completed", "first")
    assert seen == ["first"]
    await recorder.record("context", "completed", "second", metadata={"tokens": 3})

    assert seen == ["first", "second"]
    assert [a.message for a in recorder.activities] == ["first", "second"]
    assert recorder.to_dicts()[1]["metadata"] == {"tokens": 3}


async def test_recorder_awaits_an_async_callback() -> None:
    seen: list[str] = []

    async def on_activity(activity: Activity) -> None:
        seen.append(activity.stage)

    recorder = ActivityRecorder(on_activity)
    await recorder.record("ai", "started", "asking")

    assert seen == ["ai"]


async def test_add_nowait_schedules_async_callbacks_until_flush() -> None:
    seen: list[str] = []

    async def on_activity(activity: Activity) -> None:
        seen.append(activity.message)

    recorder = ActivityRecorder(on_activity)
    recorder.add_nowait(Activity(stage="tool", status="completed", message="from sync code"))
    await recorder.flush()

    assert seen == ["from sync code"]
    assert len(recorder.activities) == 1


async def test_activities_property_is_a_copy() -> None:
    recorder = ActivityRecorder()
    await recorder.record("ai", "failed", "no key")

    recorder.activities.clear()

    assert len(recorder.activities) == 1
