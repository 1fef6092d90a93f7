use super::*;

#[test]
fn a_home_elsewhere_never_opens_the_real_stores() {
    let real = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .dir;
    let stores = stores();
    assert!(stores.iter().any(|s| s == "~/.ssh"));
    if std::env::var_os("HOME").map(std::path::PathBuf::from) != Some(real.clone()) {
        let ssh = real.join(".ssh").display().to_string();
        assert!(stores.contains(&ssh), "{ssh} not in {stores:?}");
    }
}
