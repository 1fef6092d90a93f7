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
    assert_eq!(hello(&garbage), Hello::Unnamed);
}
