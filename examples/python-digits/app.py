"""The HTTP front, standard library only: the async-inference pattern of a web API in front of
a queue. ``POST /submit_job`` queues the image and answers its job id at once;
``GET /get_job_result/<job_id>`` answers the job's status and, once done, its result
(``?wait=N`` holds the answer up to N seconds until the job is done).

    SLUICE_URL=http://127.0.0.1:9324 python3 app.py [--port 8000]
"""
import argparse
import json
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from sluice_client import JobWaitTimeoutError, Sluice, SluiceApiError

sluice = Sluice(os.environ.get("SLUICE_URL", "http://127.0.0.1:9324"), os.environ.get("SLUICE_TOKEN"))
QUEUE = os.environ.get("DIGITS_QUEUE", "digits")


def job_view(job):
    view = {"job_id": job.id, "status": job.status}
    if job.status == "succeeded":
        view["result"] = job.output
    elif job.status in ("failed", "canceled"):
        view["error"] = job.error
    return view


class Api(BaseHTTPRequestHandler):
    def do_POST(self):
        if urlsplit(self.path).path != "/submit_job":
            return self.reply(404, {"detail": "not found"})
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"null")
        except ValueError:
            return self.reply(400, {"detail": "the body must be JSON"})
        if not isinstance(body, dict) or "pixels" not in body:
            return self.reply(400, {"detail": 'send {"pixels": [64 numbers in 0–16]}'})
        # The client's Idempotency-Key, if any, makes a retried POST the same job.
        job = sluice.queue(QUEUE).submit({"pixels": body["pixels"]}, idempotency_key=self.headers.get("idempotency-key"))
        self.reply(202, {"job_id": job.id})

    def do_GET(self):
        url = urlsplit(self.path)
        m = re.fullmatch(r"/get_job_result/([^/]+)", url.path)
        if not m:
            return self.reply(404, {"detail": "not found"})
        wait = parse_qs(url.query).get("wait", ["0"])[0]
        if not wait.isdigit() or int(wait) > 60:
            return self.reply(400, {"detail": "wait must be a whole number of seconds, 0–60"})
        try:
            job = sluice.jobs.wait(m.group(1), timeout=int(wait)) if int(wait) else sluice.jobs.get(m.group(1))
        except JobWaitTimeoutError as err:
            job = err.job
        except SluiceApiError as err:
            return self.reply(404 if err.code == "JobNotFound" else 502, {"detail": err.message})
        self.reply(200, job_view(job))

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def main():
    parser = argparse.ArgumentParser(description="HTTP front for the digits queue")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Api)
    print(f"digits API on http://127.0.0.1:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
