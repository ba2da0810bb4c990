"""E2B's signed file URLs through the official Python SDK: `download_url` and `upload_url` of a
sandbox (its envdAccessToken signs them) work without any header, with or without an expiry;
an expired or altered one is refused and reaches nothing."""

import urllib.error
import urllib.request
import uuid

import pytest


def fetch(url: str, data: bytes = None, headers: dict = None) -> tuple:
    request = urllib.request.Request(url, data=data, headers=headers or {}, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def multipart(name: str, content: bytes) -> tuple:
    boundary = uuid.uuid4().hex
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def test_signed_urls_read_and_write_without_headers(e2b, sandbox):
    sandbox.files.write("signed.txt", "read through a signed URL")
    status, body = fetch(sandbox.download_url("signed.txt"))
    assert (status, body) == (200, b"read through a signed URL")
    status, body = fetch(sandbox.download_url("signed.txt", use_signature_expiration=60))
    assert (status, body) == (200, b"read through a signed URL")

    data, headers = multipart("uploaded.txt", b"written through a signed URL")
    status, _ = fetch(sandbox.upload_url("uploaded.txt", use_signature_expiration=60), data, headers)
    assert status == 200
    assert sandbox.files.read("uploaded.txt") == "written through a signed URL"


@pytest.mark.parametrize("spoil", ["expired", "other path", "read as write"])
def test_a_spoiled_signed_url_is_refused(e2b, sandbox, spoil):
    sandbox.files.write("secret.txt", "not for you")
    if spoil == "expired":
        status, body = fetch(sandbox.download_url("secret.txt", use_signature_expiration=-5))
    elif spoil == "other path":
        url = sandbox.download_url("other.txt").replace("other.txt", "secret.txt")
        status, body = fetch(url)
    else:
        data, headers = multipart("secret.txt", b"overwritten")
        status, body = fetch(sandbox.download_url("secret.txt"), data, headers)
    assert status == 401, body
    assert sandbox.files.read("secret.txt") == "not for you"
