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
    assert_eq!(exited.state, State::Exited);
    assert_eq!(exited.exit_status(), Some(0));
    let timed_out: Record = serde_json::from_str(SAMPLES[1]).unwrap();
    assert_eq!(timed_out.state, State::TimedOut);
    assert_eq!(timed_out.exit_status(), Some(124));
    assert!(timed_out.forgotten);
}
