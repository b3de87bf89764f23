"""Proton's proton.data phases and mode strings/objects (no GPU needed)."""
import glob
import json

import msgpack
import pytest

import kscope

from conftest import child


def names(db):
    return [c["frame"]["name"] for c in db[0]["children"]]


def test_clear_then_record_again(session):
    sid, _ = session
    with kscope.scope("test0"):
        pass
    kscope.deactivate(sid, flushing=True)
    kscope.data.clear(sid)
    assert names(kscope.data.get(sid)) == []
    kscope.activate(sid)
    with kscope.scope("test1"):
        pass
    assert names(kscope.data.get(sid)) == ["test1"]


def test_phases_and_clear_up_to(session):
    sid, _ = session
    with kscope.scope("phase0"):
        pass
    phase1 = kscope.data.advance_phase(sid)
    assert phase1 == 1
    with kscope.scope("phase1"):
        pass
    assert names(kscope.data.get(sid)) == ["phase0"]  # phase=0 by default, as Proton's
    assert names(kscope.data.get(sid, phase=phase1)) == ["phase1"]
    assert msgpack.loads(kscope.data.get_msgpack(sid, phase=0), raw=False,
                         strict_map_key=False) == kscope.data.get(sid, phase=0)
    kscope.data.clear(sid, phase=phase1, clear_up_to_phase=True)
    assert names(kscope.data.get(sid, phase=phase1)) == []
    with pytest.raises(RuntimeError, match="has no data"):
        kscope.data.get(sid, phase=0)
    with pytest.raises(ValueError, match="has not started"):
        kscope.data.get(sid, phase=7)


def test_is_phase_complete(session):
    sid, _ = session
    assert not kscope.data.is_phase_complete(sid, 0)
    kscope.deactivate(sid)
    assert not kscope.data.is_phase_complete(sid, 0)  # still the current phase
    kscope.activate(sid)
    phase = kscope.data.advance_phase(sid)
    kscope.deactivate(sid, flushing=True)
    assert kscope.data.is_phase_complete(sid, 0)
    assert not kscope.data.is_phase_complete(sid, phase)
    kscope.data.advance_phase(sid)
    assert kscope.data.is_phase_complete(sid, phase - 1)
    assert kscope.data.is_phase_flushed is kscope.data.is_phase_complete
    assert kscope.data.is_phase_complete(None) is False
    assert kscope.data.advance_phase(None) is None


@pytest.mark.parametrize("data_format", ["hatchet", "hatchet_msgpack"])
def test_periodic_flushing_with_format(tmp_path, data_format):
    sid = kscope.start(str(tmp_path / "pf"), mode=f"periodic_flushing:format={data_format}")
    for i in range(30):
        if i and i % 10 == 0:
            kscope.data.advance_phase(session=sid)
        with kscope.scope(f"test_{i}", metrics={"count": 1}):
            pass
    kscope.finalize(output_format=data_format)
    files = sorted(glob.glob(str(tmp_path / f"*.{data_format}")))
    assert [f.rsplit("/", 1)[1] for f in files] == [f"pf.part_{i}.{data_format}" for i in range(3)]
    for f in files:
        with open(f, "rb") as fh:
            db = (msgpack.load(fh, raw=False, strict_map_key=False)
                  if data_format == "hatchet_msgpack" else json.load(fh))
        assert len(db[0]["children"]) == 10
        assert db[0]["children"][0]["metrics"]["count"] == 1


def test_finalize_after_phases_writes_parts(tmp_path):
    sid = kscope.start(str(tmp_path / "ph"))
    with kscope.scope("a"):
        pass
    kscope.data.advance_phase(sid)
    with kscope.scope("b"):
        pass
    kscope.finalize(sid)
    with open(tmp_path / "ph.part_0.hatchet") as f:
        assert child(json.load(f)[0], "a")
    with open(tmp_path / "ph.part_1.hatchet") as f:
        assert child(json.load(f)[0], "b")


def test_mode_objects_and_strings(tmp_path):
    assert str(kscope.mode.PCSampling(interval=500)) == "pcsampling:interval=500"
    with pytest.raises(ValueError, match="positive"):
        kscope.mode.PCSampling(interval=0)
    with pytest.raises(ValueError, match="Unknown granularity"):
        kscope.mode.Default(granularity="thread")
    assert "optimizations=time_shift" in str(kscope.mode.MMA(optimizations="time_shift"))
    with pytest.raises(NotImplementedError, match="instrumentation backend"):
        kscope.start(str(tmp_path / "x"), mode=kscope.mode.Default())
    with pytest.raises(ValueError, match="unsupported format 'csv'"):
        kscope.start(str(tmp_path / "x"), mode="periodic_flushing:format=csv")
    with pytest.raises(ValueError, match="unsupported option 'level=1'"):
        kscope.start(str(tmp_path / "x"), mode="periodic_flushing:level=1")
    with pytest.raises(TypeError, match="mode must be"):
        kscope.start(str(tmp_path / "x"), mode=3)
    sid = kscope.start(str(tmp_path / "ok"), mode="")  # no mode
    kscope.finalize(sid)
    assert (tmp_path / "ok.hatchet").exists()
