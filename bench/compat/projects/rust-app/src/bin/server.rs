fn main() -> anyhow::Result<()> {
    let listener = std::net::TcpListener::bind("127.0.0.1:7878")?;
    println!("listening on 7878");
    compat_app::serve(listener, "hello from rust\n")
}
