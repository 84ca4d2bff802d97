"""What controllers write after a chart is applied, that a nested release
reads through ``valuesFrom`` or a later render through ``lookup``.

The oracle resolves every nested release (docs/oracle.md, "Nested
releases"); a source no chart renders must come from here, modelled after
the controller that writes it, or the render is the oracle's error. Each
model writes the shape its readers in the release's charts use, with
placeholder credentials.

- **COSI** (``objectstorage.k8s.io/v1alpha1``): for a ``BucketAccess``
  with ``credentialsSecretName``, the objectstorage sidecar writes that
  Secret with one key, ``BucketInfo``, a JSON document whose ``spec``
  holds ``bucketName`` and ``secretS3`` (``endpoint``, ``region``,
  ``accessKeyID``, ``accessSecretKey``). Readers:
  ``apps/harbor/templates/harbor.yaml`` (``valuesFrom`` at the root,
  read by ``system/harbor/templates/bucket-secret.yaml``) and
  ``system/bucket/templates/user-credentials.yaml`` (``lookup``), whose
  comment describes the document.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator


def _bucket_info(access: dict) -> dict:
    name = access["metadata"]["name"]
    return {
        "apiVersion": "objectstorage.k8s.io/v1alpha1",
        "kind": "BucketInfo",
        "metadata": {"name": f"bc-{name}"},
        "spec": {
            "bucketName": f"bucket-{name}",
            "authenticationType": "KEY",
            "protocols": ["s3"],
            "secretS3": {
                "endpoint": "https://s3.example.org",
                "region": "us-east-1",
                "accessKeyID": "ORACLEACCESSKEY",
                "accessSecretKey": "oracle-secret-key",
            },
        },
    }


def written(objects: Iterable[dict], namespace: str) -> Iterator[dict]:
    """The objects controllers write for ``objects`` (a render applied in
    ``namespace``)."""
    for obj in objects:
        if obj.get("kind") == "BucketAccess" and str(obj.get("apiVersion", "")).startswith("objectstorage.k8s.io/"):
            secret = (obj.get("spec") or {}).get("credentialsSecretName")
            if not secret:
                continue
            info = json.dumps(_bucket_info(obj))
            yield {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": secret, "namespace": obj["metadata"].get("namespace") or namespace},
                "type": "Opaque",
                "data": {"BucketInfo": base64.b64encode(info.encode()).decode()},
            }
