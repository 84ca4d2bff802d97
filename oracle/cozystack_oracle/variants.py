"""Platform variants: the same application rendered on platforms whose
values differ where templates read them, so a rule that reads a platform
value is judged both ways.

A variant changes what the operator sets on the platform (``core/platform``'s
values, rendered into ``_cluster`` and every tenant's ``_namespace``) or
where the object lives. The default is ``values-isp-full.yaml`` as shipped:
platform OIDC off, the host ``example.org``, objects in ``tenant-foo``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Variant:
    name: str
    #: Merged over the platform's ``values-isp-full.yaml``.
    platform: dict = field(default_factory=dict)
    #: The kinds whose samples this variant moves, and the namespace it
    #: moves them to.
    moves: tuple[str, ...] = ()
    namespace: str = ""
    #: Why this variant exists, for a reader of the report.
    about: str = ""

    def place(self, obj: dict) -> dict:
        """``obj`` as this variant renders it."""
        if not self.moves or obj.get("kind") not in self.moves:
            return obj
        moved = copy.deepcopy(obj)
        moved.setdefault("metadata", {})["namespace"] = self.namespace
        return moved

    def applies_to(self, kind: str) -> bool:
        return not self.moves or kind in self.moves


DEFAULT = Variant("default", about="values-isp-full.yaml as shipped")

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        DEFAULT,
        Variant(
            "oidc",
            platform={"authentication": {"oidc": {"enabled": True}}},
            about="platform OIDC on (authentication.oidc.enabled): `oidc.mode: System` renders",
        ),
        Variant(
            "no-host",
            platform={"publishing": {"host": ""}},
            about="no root host (publishing.host empty): tenants have no host, `_namespace.host` is empty",
        ),
        Variant(
            "host-ingress",
            moves=("Ingress",),
            namespace="tenant-root",
            about="the Ingress of tenant-root, the host ingress (publishing.ingressName)",
        ),
    )
}
