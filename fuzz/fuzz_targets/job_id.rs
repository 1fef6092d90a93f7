//! Job names and ids: `slug` and `JobId::generate` take any bytes (a `--name`), `JobId::parse` any
//! text (a record, a command line). None may panic; an id is made of `[a-z0-9-]` only, is one path
//! component, and joined to a directory never leaves it; `parse` accepts exactly what `generate`
//! makes.

#![no_main]

use std::path::{Component, Path};

use isolate::job::id::{slug, JobId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = slug(data);
    assert!(!s.is_empty() && s.len() <= 32, "{s:?}");
    assert!(
        s.bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-')),
        "{s:?}"
    );
    assert!(
        !s.starts_with('-') && !s.ends_with('-') && !s.contains("--"),
        "{s:?}"
    );
    assert_eq!(slug(s.as_bytes()), s, "slug is not idempotent");

    let id = JobId::generate(data);
    assert_safe(id.as_str());
    assert_eq!(JobId::parse(id.as_str()).as_ref(), Some(&id));
    assert_eq!(id.branch(), format!("isolate/{id}"));

    // Whatever a tampered record or a user types: parse accepts only ids generate could make.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(parsed) = JobId::parse(text) {
            assert_eq!(parsed.as_str(), text);
            assert_safe(text);
            let (slug_part, hex) = text.rsplit_once('-').unwrap();
            assert_eq!(slug(slug_part.as_bytes()), slug_part);
            assert_eq!(hex.len(), 4);
        }
    }
});

fn assert_safe(id: &str) {
    assert!(
        id.bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-')),
        "{id:?}"
    );
    let components: Vec<Component> = Path::new(id).components().collect();
    assert!(
        matches!(components.as_slice(), [Component::Normal(_)]),
        "{id:?} is not one plain path component"
    );
    let root = Path::new("/state/jobs");
    let joined = root.join(id);
    assert_eq!(joined.parent(), Some(root), "{id:?} leaves its directory");
    // A valid ref name component for `isolate/<id>` (git check-ref-format): no dots at all here.
    assert!(!id.contains('.') && !id.is_empty());
}
