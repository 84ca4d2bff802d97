// The waPC host functions the SDK's `__guest_call` export imports. The
// browser build never calls that export (the page calls `evaluate`), so no
// waPC host exists here: each function only says so if it were ever called.
const absent = (name) => () => { throw new Error(`waPC host function ${name} is not in the browser`); };
export const __guest_request = absent("__guest_request");
export const __guest_response = absent("__guest_response");
export const __guest_error = absent("__guest_error");
export const __host_call = absent("__host_call");
export const __host_response = absent("__host_response");
export const __host_response_len = absent("__host_response_len");
export const __host_error = absent("__host_error");
export const __host_error_len = absent("__host_error_len");
export const __console_log = absent("__console_log");
