//! The record's wire form, held to committed samples of schema 1.

use super::*;

/// Records of schema 1 as isolate wrote them (one from a real run, one with every optional field
/// set): read and written again, byte for byte. A change to the types that changes the wire
/// form fails here.
const SAMPLES: [&str; 2] = [
    include_str!("../../../tests/data/record-schema-1-exited.json"),
    include_str!("../../../tests/data/record-schema-1-timed-out.json"),
];

#[test]
fn a_schema_1_record_is_written_back_byte_for_byte() {
    for sample in SAMPLES {
        let record: Record = serde_json::from_str(sample).unwrap();
        let written = serde_json::to_string_pretty(&record).unwrap() + "\n";
        assert_eq!(written, sample);
    }
}

#[test]
fn a_schema_1_record_reads_as_the_job_it_describes() {
    let exited: Record = serde_json::from_str(SAMPLES[0]).unwrap();
    assert_eq!(exited.state(), State::Exited { code: 0 });
    assert_eq!(exited.exit_status(), Some(0));
    let timed_out: Record = serde_json::from_str(SAMPLES[1]).unwrap();
    assert_eq!(
        timed_out.state(),
        State::TimedOut {
            exit: Some(Exit::Signal(15))
        }
    );
    assert_eq!(timed_out.exit_status(), Some(124));
    assert!(timed_out.forgotten);
}

/// An exit is a code or a signal: a record whose exit has neither does not parse; one that says it
/// ended without an exit reads as lost (it has no status).
#[test]
fn an_exit_is_a_code_or_a_signal() {
    let neither = SAMPLES[0].replace("\"code\": 0,", "\"code\": null,");
    assert!(serde_json::from_str::<Record>(&neither).is_err());
    let without = SAMPLES[0].replace(
        "\"exit\": {\n    \"code\": 0,\n    \"signal\": null\n  },",
        "\"exit\": null,",
    );
    let record: Record = serde_json::from_str(&without).unwrap();
    assert_eq!(record.state(), State::Lost);
    assert_eq!(record.exit_status(), None);
    let mut record = record;
    record.set_state(State::Killed { signal: 9 });
    assert_eq!(record.exit_status(), Some(137));
    let text = serde_json::to_string(&record).unwrap();
    assert!(
        text.contains("\"state\":\"killed\"")
            && text.contains("\"exit\":{\"code\":null,\"signal\":9}"),
        "{text}"
    );
}

/// A queued job and one that never ran have names of their own; the one that never ran keeps the
/// status `run` would have exited with in its exit code.
#[test]
fn queued_and_failed_are_states_on_the_wire() {
    let mut record: Record = serde_json::from_str(SAMPLES[0]).unwrap();
    record.set_state(State::Queued);
    let text = serde_json::to_string(&record).unwrap();
    assert!(
        text.contains("\"state\":\"queued\"") && text.contains("\"exit\":null"),
        "{text}"
    );
    assert!(!State::Queued.ended() && State::Queued.live());
    assert_eq!(record.exit_status(), None);
    record.set_state(State::Failed { status: 127 });
    let text = serde_json::to_string(&record).unwrap();
    assert!(
        text.contains("\"state\":\"failed\"")
            && text.contains("\"exit\":{\"code\":127,\"signal\":null}"),
        "{text}"
    );
    let back: Record = serde_json::from_str(&text).unwrap();
    assert_eq!(back.state(), State::Failed { status: 127 });
    assert_eq!(back.exit_status(), Some(127));
    assert!(back.state().ended());
}
