//! The admission request a policy receives, read lazily.
//!
//! policy-server calls `validate` with `{"request": <AdmissionRequest>,
//! "settings": <settings>}`. [`Payload::parse`] reads the request's small
//! header fields (kind, resource, name, namespace, operation, userInfo),
//! which the apiserver sends before the objects, and stops there; `object`
//! and `oldObject` are found only when a rule asks for them, and come back
//! as [`Field`]s rooted at the object, so their paths read
//! `spec.storageClass` rather than `request.object.spec.storageClass`.
//!
//! Member names of the request are matched exactly as the apiserver writes
//! them (plain ASCII, no escapes).

use std::borrow::Cow;
use std::cell::RefCell;

use crate::field::{Field, FieldError, FieldPath};
use crate::json::{self, Json, JsonError, Kind, key_equals, last_member};

/// The admission operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "CREATE" => Some(Operation::Create),
            "UPDATE" => Some(Operation::Update),
            "DELETE" => Some(Operation::Delete),
            "CONNECT" => Some(Operation::Connect),
            _ => None,
        }
    }
}

/// The authenticated user behind the request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct User<'a> {
    pub username: Cow<'a, str>,
    pub groups: Vec<Cow<'a, str>>,
}

/// The request's members, read as far as needed.
#[derive(Debug)]
struct Rest<'a> {
    members: json::Members<'a>,
    object: Option<Json<'a>>,
    old_object: Option<Json<'a>>,
    exhausted: bool,
}

/// An admission request.
#[derive(Debug)]
pub struct Request<'a> {
    pub operation: Operation,
    /// `kind.group`, e.g. `apps.cozystack.io` (empty for the core group).
    pub group: Cow<'a, str>,
    /// `kind.kind`, e.g. `Postgres`.
    pub kind: Cow<'a, str>,
    /// `resource.resource`, the plural (audit-scanner sends the kind here).
    pub resource: Cow<'a, str>,
    /// `name`, falling back to the object's `metadata.name`.
    pub name: Cow<'a, str>,
    /// `namespace`, empty for cluster-scoped objects.
    pub namespace: Cow<'a, str>,
    pub user: User<'a>,
    rest: RefCell<Rest<'a>>,
}

/// The `validate` payload split into request and raw settings.
#[derive(Debug)]
pub struct Payload<'a> {
    pub request: Request<'a>,
    pub settings: Option<Json<'a>>,
}

/// The payload could not be read; the error names the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError(pub FieldError);

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "admission request: {}", self.0)
    }
}

impl std::error::Error for RequestError {}

impl From<FieldError> for RequestError {
    fn from(error: FieldError) -> Self {
        Self(error)
    }
}

fn malformed(path: &str, error: JsonError) -> FieldError {
    FieldError::Malformed {
        path: FieldPath::parse(path),
        error,
    }
}

/// A string member of the request header, empty when absent or null.
fn text<'a>(path: &str, value: Option<Json<'a>>) -> Result<Cow<'a, str>, FieldError> {
    let wrong = |found| FieldError::WrongType {
        path: FieldPath::parse(path),
        expected: "a string",
        found,
    };
    match value {
        None => Ok(Cow::Borrowed("")),
        Some(json) => match json.kind() {
            Kind::Null => Ok(Cow::Borrowed("")),
            Kind::String => json.as_str().ok_or_else(|| wrong(Kind::String)),
            other => Err(wrong(other)),
        },
    }
}

/// The members `keys` of a header object such as `request.kind`; an
/// absent or `null` object has none (a `null` member is read as absent by
/// [`text`] and by the `groups` check).
fn header_members<'a, const N: usize>(
    path: &str,
    value: Option<Json<'a>>,
    keys: [&str; N],
) -> Result<[Option<Json<'a>>; N], FieldError> {
    match value.map(|json| (json, json.kind())) {
        None | Some((_, Kind::Null)) => Ok([None; N]),
        Some((json, Kind::Object)) => json.get_all(keys).map_err(|e| malformed(path, e)),
        Some((_, other)) => Err(FieldError::WrongType {
            path: FieldPath::parse(path),
            expected: "an object",
            found: other,
        }),
    }
}

/// `object` itself when present; else `Missing`, named as the request names
/// it (an object field's own path is the root).
fn required<'a>(object: Field<'a>, name: &str) -> Result<Field<'a>, FieldError> {
    if object.is_present() {
        Ok(object)
    } else {
        Err(FieldError::Missing {
            path: FieldPath::parse(name),
        })
    }
}

/// The header members, as found.
#[derive(Default)]
struct Header<'a> {
    kind: Option<Json<'a>>,
    resource: Option<Json<'a>>,
    name: Option<Json<'a>>,
    namespace: Option<Json<'a>>,
    operation: Option<Json<'a>>,
    user_info: Option<Json<'a>>,
}

impl Header<'_> {
    fn complete(&self) -> bool {
        self.kind.is_some()
            && self.resource.is_some()
            && self.name.is_some()
            && self.namespace.is_some()
            && self.operation.is_some()
            && self.user_info.is_some()
    }
}

impl<'a> Payload<'a> {
    /// Reads a `validate` payload.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, RequestError> {
        let document = Json::parse_lazy(bytes).map_err(|e| malformed("", e))?;
        if document.kind() != Kind::Object {
            return Err(FieldError::WrongType {
                path: FieldPath::root(),
                expected: "an object",
                found: document.kind(),
            }
            .into());
        }
        // The settings follow the request; reading them from the end of the
        // payload spares a pass over the whole request.
        let settings = match last_member(bytes) {
            Some((key, value)) if key_equals(key, "settings") => Some(value),
            _ => document
                .get("settings")
                .map_err(|e| malformed("settings", e))?,
        };
        let request = document
            .get("request")
            .map_err(|e| malformed("request", e))?
            .filter(|r| r.kind() != Kind::Null)
            .ok_or_else(|| FieldError::Missing {
                path: FieldPath::parse("request"),
            })?;
        Ok(Self {
            request: Request::read(request)?,
            settings,
        })
    }
}

impl<'a> Request<'a> {
    fn read(request: Json<'a>) -> Result<Self, FieldError> {
        if request.kind() != Kind::Object {
            return Err(FieldError::WrongType {
                path: FieldPath::parse("request"),
                expected: "an object",
                found: request.kind(),
            });
        }
        let mut rest = Rest {
            members: request.members(),
            object: None,
            old_object: None,
            exhausted: false,
        };
        let mut header = Header::default();
        // The apiserver writes the header before the objects, so this loop
        // normally stops before `object`; members it passes are kept.
        while !header.complete() {
            let Some(entry) = rest.members.next() else {
                rest.exhausted = true;
                break;
            };
            let (key, value) = entry.map_err(|e| malformed("request", e))?;
            let slot = match key {
                b"\"kind\"" => &mut header.kind,
                b"\"resource\"" => &mut header.resource,
                b"\"name\"" => &mut header.name,
                b"\"namespace\"" => &mut header.namespace,
                b"\"operation\"" => &mut header.operation,
                b"\"userInfo\"" => &mut header.user_info,
                b"\"object\"" => &mut rest.object,
                b"\"oldObject\"" => &mut rest.old_object,
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        let operation_text = text("request.operation", header.operation)?;
        let operation = Operation::parse(&operation_text).ok_or_else(|| FieldError::WrongType {
            path: FieldPath::parse("request.operation"),
            expected: "one of CREATE, UPDATE, DELETE, CONNECT",
            found: Kind::String,
        })?;
        let [group, kind] = header_members("request.kind", header.kind, ["group", "kind"])?;
        let [resource] = header_members("request.resource", header.resource, ["resource"])?;
        let [username, groups] =
            header_members("request.userInfo", header.user_info, ["username", "groups"])?;
        let groups = match groups {
            Some(list) if list.kind() == Kind::Array => list
                .elements()
                .enumerate()
                .map(|(i, group)| {
                    let group = group.map_err(|e| malformed("request.userInfo.groups", e))?;
                    group.as_str().ok_or_else(|| FieldError::WrongType {
                        path: FieldPath::parse("request.userInfo.groups").index(i),
                        expected: "a string",
                        found: group.kind(),
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(other) if other.kind() != Kind::Null => {
                return Err(FieldError::WrongType {
                    path: FieldPath::parse("request.userInfo.groups"),
                    expected: "a list",
                    found: other.kind(),
                });
            }
            _ => Vec::new(),
        };
        let mut request = Self {
            operation,
            group: text("request.kind.group", group)?,
            kind: text("request.kind.kind", kind)?,
            resource: text("request.resource.resource", resource)?,
            name: text("request.name", header.name)?,
            namespace: text("request.namespace", header.namespace)?,
            user: User {
                username: text("request.userInfo.username", username)?,
                groups,
            },
            rest: RefCell::new(rest),
        };
        if request.name.is_empty() {
            // A malformed object is the rule's business; the name is only a
            // fallback here.
            let name = request
                .subject()
                .and_then(|s| s.at("metadata.name")?.string());
            request.name = name.ok().flatten().unwrap_or_default();
        }
        Ok(request)
    }

    /// `object` or `oldObject`, reading on through the request only if it
    /// has not been passed yet.
    fn find(&self, old: bool) -> Result<Option<Json<'a>>, FieldError> {
        let mut rest = self.rest.borrow_mut();
        loop {
            let found = if old { rest.old_object } else { rest.object };
            if found.is_some() || rest.exhausted {
                return Ok(found);
            }
            match rest.members.next() {
                None => rest.exhausted = true,
                Some(entry) => {
                    let (key, value) = entry.map_err(|e| malformed("request", e))?;
                    match key {
                        b"\"object\"" => _ = rest.object.get_or_insert(value),
                        b"\"oldObject\"" => _ = rest.old_object.get_or_insert(value),
                        _ => {}
                    }
                }
            }
        }
    }

    /// `object`, with paths relative to the object (`spec.x`, not
    /// `request.object.spec.x`); absent on DELETE.
    pub fn object(&self) -> Result<Field<'a>, FieldError> {
        Ok(Field::root(self.find(false)?))
    }

    /// `oldObject`, with paths relative to the object; present on UPDATE and
    /// DELETE.
    pub fn old_object(&self) -> Result<Field<'a>, FieldError> {
        Ok(Field::root(self.find(true)?))
    }

    /// `object`, which the rule cannot judge without: absent is malformed
    /// (400, `object: is required`).
    pub fn required_object(&self) -> Result<Field<'a>, FieldError> {
        self.object().and_then(|object| required(object, "object"))
    }

    /// `oldObject`, which the rule cannot judge without: absent is malformed
    /// (400, `oldObject: is required`).
    pub fn required_old_object(&self) -> Result<Field<'a>, FieldError> {
        self.old_object()
            .and_then(|object| required(object, "oldObject"))
    }

    /// The object the request is about: `oldObject` on DELETE, else `object`.
    pub fn subject(&self) -> Result<Field<'a>, FieldError> {
        if self.operation == Operation::Delete {
            self.old_object()
        } else {
            self.object()
        }
    }

    /// The resource as kubectl names it unambiguously: `configmaps`,
    /// `postgreses.apps.cozystack.io`.
    pub fn kubectl_resource(&self) -> String {
        // Built with push_str: in wasm, core::fmt costs more per call than
        // the whole lookup of the field a message is about.
        let mut text = String::with_capacity(self.resource.len() + self.group.len() + 1);
        if self.resource.is_empty() {
            text.push_str(&self.kind.to_lowercase());
        } else {
            text.push_str(&self.resource);
        }
        if !self.group.is_empty() {
            text.push('.');
            text.push_str(&self.group);
        }
        text
    }

    /// ` --namespace <ns>` for kubectl commands, empty when cluster-scoped.
    pub fn kubectl_namespace_flag(&self) -> String {
        if self.namespace.is_empty() {
            String::new()
        } else {
            [" --namespace ", &self.namespace].concat()
        }
    }

    /// `Kind namespace/name` for messages.
    pub fn describe(&self) -> String {
        if self.namespace.is_empty() {
            [&*self.kind, " ", &self.name].concat()
        } else {
            [&*self.kind, " ", &self.namespace, "/", &self.name].concat()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DELETE: &str = r#"{"settings": {"x": 1}, "request": {
        "uid": "u", "kind": {"group": "apps.cozystack.io", "version": "v1alpha1", "kind": "Postgres"},
        "resource": {"group": "apps.cozystack.io", "version": "v1alpha1", "resource": "postgreses"},
        "namespace": "tenant-foo", "operation": "DELETE",
        "userInfo": {"username": "alice", "groups": ["g1", "system:authenticated"]},
        "object": null, "oldObject": {"metadata": {"name": "db"}, "spec": {"storageClass": "local"}}}}"#;

    #[test]
    fn reads_what_rules_need() {
        let payload = Payload::parse(DELETE.as_bytes()).unwrap();
        let request = payload.request;
        assert_eq!(request.operation, Operation::Delete);
        assert_eq!(request.kind, "Postgres");
        assert_eq!(request.name, "db", "falls back to oldObject.metadata.name");
        assert_eq!(request.user.groups, vec!["g1", "system:authenticated"]);
        assert!(!request.object().unwrap().is_present());
        let class = request.subject().unwrap().at("spec.storageClass").unwrap();
        assert_eq!(class.path().as_str(), "spec.storageClass");
        assert_eq!(class.string().unwrap().unwrap(), "local");
        assert_eq!(request.kubectl_resource(), "postgreses.apps.cozystack.io");
        assert_eq!(request.describe(), "Postgres tenant-foo/db");
        assert_eq!(payload.settings.unwrap().raw(), b"{\"x\": 1}");
    }

    #[test]
    fn settings_may_come_anywhere() {
        let settings_last = DELETE
            .replacen("{\"settings\": {\"x\": 1}, ", "{", 1)
            .replacen("}}}}", "}}}, \"settings\": {\"y\": 2}}", 1);
        let payload = Payload::parse(settings_last.as_bytes()).unwrap();
        assert_eq!(payload.settings.unwrap().raw(), b"{\"y\": 2}");
    }

    #[test]
    fn objects_are_found_in_any_order() {
        let reordered = r#"{"request": {"oldObject": {"a": 1}, "object": {"b": 2}, "operation": "UPDATE",
            "kind": {"kind": "K"}, "resource": {"resource": "ks"}, "userInfo": {}}}"#;
        let request = Payload::parse(reordered.as_bytes()).unwrap().request;
        assert_eq!(
            request
                .object()
                .unwrap()
                .field("b")
                .unwrap()
                .json()
                .unwrap()
                .as_i64(),
            Some(2)
        );
        assert_eq!(
            request
                .old_object()
                .unwrap()
                .field("a")
                .unwrap()
                .json()
                .unwrap()
                .as_i64(),
            Some(1)
        );
        assert_eq!(request.namespace, "");
    }

    #[test]
    fn the_header_stops_before_the_objects() {
        // Everything after userInfo is garbage: a rule that needs no object
        // never reads it.
        let lazy = r#"{"request": {"kind": {"kind": "K"}, "resource": {"resource": "ks"}, "name": "n",
            "namespace": "ns", "operation": "CREATE", "userInfo": {}, "object": @@@}}"#;
        let request = Payload::parse(lazy.as_bytes()).unwrap().request;
        assert_eq!(request.name, "n");
        assert!(request.object().is_err());
    }

    #[test]
    fn names_the_broken_field() {
        let broken = DELETE.replace("\"DELETE\"", "\"PATCH\"");
        let error = Payload::parse(broken.as_bytes()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "admission request: request.operation must be one of CREATE, UPDATE, DELETE, CONNECT, not a string"
        );
        let broken = DELETE.replace("[\"g1\"", "[1");
        let error = Payload::parse(broken.as_bytes()).unwrap_err().to_string();
        assert!(
            error.contains("request.userInfo.groups[0] must be a string, not a number"),
            "{error}"
        );
        let broken = DELETE.replace("\"namespace\": \"tenant-foo\"", "\"namespace\": 7");
        assert!(
            Payload::parse(broken.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("request.namespace")
        );
        assert!(
            Payload::parse(b"{}")
                .unwrap_err()
                .to_string()
                .contains("request is required")
        );
        assert!(Payload::parse(b"[]").is_err());
        assert!(Payload::parse(b"not json").is_err());
    }
}
