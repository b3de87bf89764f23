"""async_service.py - a small asyncio service: a TCP echo server, clients,
a subprocess, a ticking task, and its own SIGTERM handler that shuts it
down cleanly (run bare and under kscope run by test/faithful/corpus.py,
which sends SIGTERM once it prints `ready`)."""
import asyncio
import signal
import sys


async def echo(reader, writer):
    while data := await reader.readline():
        writer.write(data.upper())
        await writer.drain()
    writer.close()


async def client(port, i):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"hello {i}\n".encode())
    await writer.drain()
    reply = await reader.readline()
    writer.close()
    await writer.wait_closed()
    return reply.decode().strip()


async def tick(counter):
    while True:
        counter[0] += 1
        await asyncio.sleep(0.01)


async def main():
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    replies = await asyncio.gather(*(client(port, i) for i in range(5)))
    print("replies:", replies)
    proc = await asyncio.create_subprocess_exec("sh", "-c", "echo from a subprocess",
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    print("subprocess:", out.decode().strip(), "exit", proc.returncode)
    counter = [0]
    ticker = asyncio.create_task(tick(counter))
    print("ready", flush=True)
    await stop.wait()
    ticker.cancel()
    try:
        await ticker
    except asyncio.CancelledError:
        print("ticker cancelled, it ticked:", counter[0] > 0)
    server.close()
    await server.wait_closed()
    print("SIGTERM: stopped cleanly")
    return 0


sys.exit(asyncio.run(main()))
