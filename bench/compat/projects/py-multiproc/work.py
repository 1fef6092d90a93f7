"""Process-parallel helpers an agent's scripts commonly use, one per subcommand."""

import asyncio
import concurrent.futures
import multiprocessing as mp
import sys
from multiprocessing import shared_memory


def square(x):
    return x * x


def pool():
    with mp.Pool(2) as p:
        assert p.map(square, range(100)) == [x * x for x in range(100)]


def procpool():
    with concurrent.futures.ProcessPoolExecutor(2) as ex:
        assert list(ex.map(square, range(50))) == [x * x for x in range(50)]


def shm():
    block = shared_memory.SharedMemory(create=True, size=1024)
    try:
        block.buf[:5] = b"hello"
        other = shared_memory.SharedMemory(name=block.name)
        assert bytes(other.buf[:5]) == b"hello"
        other.close()
    finally:
        block.close()
        block.unlink()


def manager():
    with mp.Manager() as m:
        d = m.dict()
        ps = [mp.Process(target=_put, args=(d, i)) for i in range(4)]
        for p in ps:
            p.start()
        for p in ps:
            p.join()
        assert dict(d) == {i: i * i for i in range(4)}


def _put(d, i):
    d[i] = i * i


def forkserver():
    ctx = mp.get_context("forkserver")
    with ctx.Pool(2) as p:
        assert p.map(square, range(10)) == [x * x for x in range(10)]


def spawn_queue():
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_send, args=(q,))
    p.start()
    assert q.get(timeout=30) == "pong"
    p.join()


def _send(q):
    q.put("pong")


async def _echo_server():
    async def handle(r, w):
        w.write(await r.readline())
        await w.drain()
        w.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"ping\n")
    assert await r.readline() == b"ping\n"
    w.close()
    srv.close()
    await srv.wait_closed()


def asyncio_tcp():
    asyncio.run(_echo_server())


if __name__ == "__main__":
    globals()[sys.argv[1]]()
    print(sys.argv[1], "ok")
