"""A small PNG reader for the report tests (8-bit RGB/RGBA, non-interlaced,
what Chromium's screenshots are): pixels as a numpy array, so a test can say
whether a screenshot shows anything. The standard library and numpy only."""
import struct
import zlib

import numpy as np


def read(path):
    """(height, width, channels) uint8 array of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, width = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace:
                raise ValueError(f"{path}: depth {depth}, colour type {color}, interlace {interlace} not handled")
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if width is None:
        raise ValueError(f"{path}: no IHDR")
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8)
    stride = width * bpp
    rows = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        f, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if f == 0:
            cur = line
        elif f == 1:  # Sub: a running sum per channel
            cur = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) % 256
        elif f == 2:  # Up
            cur = (line + prev) % 256
        elif f in (3, 4):  # Average, Paeth: pixel by pixel
            ln, up, cur = line.tolist(), prev.tolist(), [0] * stride
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                b = up[x]
                if f == 3:
                    cur[x] = (ln[x] + (a + b) // 2) & 255
                else:
                    c = up[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                    cur[x] = (ln[x] + pred) & 255
            cur = np.array(cur, dtype=np.int32)
        else:
            raise ValueError(f"{path}: filter {f}")
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)
