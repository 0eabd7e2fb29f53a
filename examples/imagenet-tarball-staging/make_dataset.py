"""Make a synthetic ImageNet-style folder tree: <out>/train/<class>/<n>.JPEG of random bytes.

Why: the point of the example is the file system, not the images. A real ImageNet has 1.28
million small files; reading them one by one from Lustre (/project, /scratch) is slow for
everyone, while one archive copied to the node's local disk and extracted there is fast. This
makes a small stand-in with the same shape, so that packing and staging can be tried without
downloading anything. The bytes are random (not decodable images) and reproducible from --seed.
"""

import argparse
import random
from pathlib import Path


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="imagenet-mini", help="folder to create (default: imagenet-mini)")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--per-class", type=int, default=100, help="files in each class folder")
    parser.add_argument("--bytes", type=int, default=16384, help="size of each file (ImageNet's average is ~110 KB)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main():
    args = parse_args()
    rng = random.Random(args.seed)
    out = Path(args.out)
    for c in range(args.classes):
        folder = out / "train" / f"n{c:08d}"              # ImageNet names classes by WordNet id, nXXXXXXXX
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(args.per_class):
            (folder / f"n{c:08d}_{n}.JPEG").write_bytes(rng.randbytes(args.bytes))
    total = args.classes * args.per_class
    print(f"wrote {total} files of {args.bytes} bytes ({total * args.bytes / 2**20:.1f} MiB) under {out}/train")


if __name__ == "__main__":
    main()
