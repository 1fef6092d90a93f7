//! The server name read from ClientHello records, whole, partial and garbled.

use super::*;

/// A ClientHello record naming `name` (the fields a real one has, minimal values).
fn client_hello(name: &str) -> Vec<u8> {
    let mut sni = vec![0u8, 0];
    let list_len = (name.len() + 3) as u16;
    sni.extend_from_slice(&(list_len + 2).to_be_bytes());
    sni.extend_from_slice(&list_len.to_be_bytes());
    sni.push(0);
    sni.extend_from_slice(&(name.len() as u16).to_be_bytes());
    sni.extend_from_slice(name.as_bytes());
    let mut body = vec![3, 3];
    body.extend_from_slice(&[7u8; 32]);
    body.push(0); // session id
    body.extend_from_slice(&[0, 2, 0x13, 0x01]); // one suite
    body.extend_from_slice(&[1, 0]); // no compression
    body.extend_from_slice(&(sni.len() as u16).to_be_bytes());
    body.extend_from_slice(&sni);
    let mut hs = vec![1];
    hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    hs.extend_from_slice(&body);
    let mut record = vec![0x16, 3, 1];
    record.extend_from_slice(&(hs.len() as u16).to_be_bytes());
    record.extend_from_slice(&hs);
    record
}

#[test]
fn the_server_name_of_a_client_hello_is_read_whole_or_said_partial() {
    let record = client_hello("Api.Example.com.");
    assert_eq!(hello(&record), Hello::Names("api.example.com".into()));
    assert_eq!(hello(&record[..20]), Hello::Partial);
    assert_eq!(hello(b""), Hello::Partial);
    assert_eq!(hello(b"GET / HTTP/1.1\r\n"), Hello::Other);
    let mut garbage = record.clone();
    garbage.truncate(60);
    garbage[4] = 55;
    // A message cut short, though its record and its length say it is whole.
    garbage[6..9].copy_from_slice(&[0, 0, 51]);
    assert_eq!(hello(&garbage), Hello::Unnamed);
}

/// `record` (one whole ClientHello record) as the records of at most `size` bytes of its message
/// a client may split it into.
fn split(record: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for fragment in record[5..].chunks(size) {
        out.extend_from_slice(&[0x16, 3, 1]);
        out.extend_from_slice(&(fragment.len() as u16).to_be_bytes());
        out.extend_from_slice(fragment);
    }
    out
}

#[test]
fn a_client_hello_split_across_records_is_read_whole() {
    // The name was read from the first record only: a hello split after 40 bytes named nothing,
    // and its tunnel went to whatever site the rest named.
    let record = client_hello("evil.example.net");
    for size in [1, 40, 100] {
        let split = split(&record, size);
        assert_eq!(
            hello(&split),
            Hello::Names("evil.example.net".into()),
            "{size}"
        );
        assert_eq!(hello(&split[..split.len() - 1]), Hello::Partial, "{size}");
    }
}

#[test]
fn records_that_are_no_client_hello_name_nothing() {
    let record = client_hello("api.example.com");
    let mut alert_first = vec![0x15, 3, 1, 0, 2, 1, 0];
    alert_first.extend_from_slice(&record);
    let mut empty_first = vec![0x16, 3, 1, 0, 0];
    empty_first.extend_from_slice(&record);
    let mut server_hello = record.clone();
    server_hello[5] = 2;
    let mut overlong = record.clone();
    overlong[6..9].copy_from_slice(&[2, 0, 0]);
    for bytes in [&alert_first, &empty_first, &server_hello, &overlong] {
        assert_ne!(hello(bytes), Hello::Names("api.example.com".into()));
    }
    assert_eq!(hello(&alert_first), Hello::Other);
    for bytes in [&empty_first, &server_hello, &overlong] {
        assert_eq!(hello(bytes), Hello::Unnamed);
    }
}

#[test]
fn a_tunnel_to_the_webs_ports_carries_tls_naming_its_target_and_others_what_they_carry() {
    let to = |host, port| Target {
        method: "CONNECT",
        host,
        port,
    };
    let named = |name: &str| Hello::Names(name.into());
    let goes = |hello: &Hello, empty, target: &Target| refusal(hello, empty, target).is_none();
    let site = to("api.example.com", 443);
    assert!(goes(&named("api.example.com"), false, &site));
    assert!(!goes(&named("evil.example.net"), false, &site));
    assert!(!goes(&Hello::Unnamed, false, &site));
    assert!(
        !goes(&Hello::Partial, true, &site),
        "nothing within the time"
    );
    assert!(!goes(&Hello::Partial, false, &site), "a hello never whole");
    // Plain HTTP in a tunnel: its Host would go to the front unread.
    assert!(!goes(&Hello::Other, false, &to("api.example.com", 80)));
    // Other ports: ssh's banner, a server that speaks first; TLS there is held all the same.
    let ssh = to("git.example.com", 22);
    assert!(goes(&Hello::Other, false, &ssh));
    assert!(goes(&Hello::Partial, true, &ssh));
    assert!(!goes(&named("evil.example.net"), false, &ssh));
    assert!(!goes(&Hello::Partial, false, &ssh));
    // An address the allowlist names has no server name to hold.
    assert!(goes(&Hello::Unnamed, false, &to("192.0.2.7", 443)));
}
