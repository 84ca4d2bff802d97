//! What `snapshot-command --wiring` writes of the installed bundle that is
//! not a Kubernetes object, and `wiring` reads: the discovery document of
//! each group version the bundle's rules name, as a document of its own
//! (`kubectl get --raw` prints it without a name, which a snapshot's
//! objects need).

/// The API version of the capture's own documents (its record's).
pub const SERVED_API_VERSION: &str = capabilities::snapshot::CAPTURE_API_VERSION;

/// A group version's discovery document: `metadata.name` is the group
/// version (`apps.cozystack.io/v1alpha1`, `v1`), `discovery` the
/// `APIResourceList` the API server answered.
pub const SERVED_KIND: &str = "ServedResources";
