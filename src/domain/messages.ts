// Every text Masakari puts in an error body, as a named function, so that a
// grep for the message (or its name) lands here. Texts are byte-for-byte the
// reference's (masakari/exception.py, masakari/ha/api.py, the controllers in
// masakari/api/openstack/ha/, oslo.db, oslo.middleware, webob).

// ------------------------------------------------------------------ segments
export const failoverSegmentNotFound = (id: string) => `No failover segment with id ${id}.`;
export const failoverSegmentExists = (name: string) => `Failover segment with name ${name} already exists.`;
/** ha/api.py update_segment. */
export const failoverSegmentInUseUpdate = (uuid: string) =>
  `Failover segment ${uuid} can't be updated as it is in-use to process notifications.`;
/** ha/api.py delete_segment (note the parentheses, as in Masakari). */
export const failoverSegmentInUseDelete = (uuid: string) =>
  `Failover segment (${uuid}) can't be deleted as it is in-use to process notifications.`;

// ------------------------------------------------------------------ hosts
export const hostNotFound = (id: string) => `No host with id ${id}.`;
export const hostNotFoundUnderFailoverSegment = (hostUuid: string, segmentUuid: string) =>
  `Host '${hostUuid}' under failover_segment '${segmentUuid}' could not be found.`;
export const hostNotFoundByName = (name: string) => `Host with name ${name} could not be found.`;
export const hostExists = (name: string) => `Host with name ${name} already exists.`;
export const hostInUseUpdate = (uuid: string) =>
  `Host ${uuid} can't be updated as it is in-use to process notifications.`;
export const hostInUseDelete = (uuid: string) =>
  `Host ${uuid} can't be deleted as it is in-use to process notifications.`;
export const computeNotFoundByName = (name: string) => `Compute service with name ${name} could not be found.`;
/** hosts.py index: strict query booleans. */
export const invalidFilterBoolean = (field: string, reason: string) => `Invalid value for ${field}: ${reason}`;

// ------------------------------------------------------------------ notifications
export const notificationNotFound = (id: string) => `No notification with id ${id}.`;
export const hostOnMaintenance = (host: string, type: string) =>
  `Notification received from host ${host} of type '${type}' is ignored as the host is already under maintenance.`;
export const duplicateNotification = (host: string, type: string) =>
  `Notification received from host ${host} of type ${type} is duplicate.`;
export const invalidGeneratedSince = () => 'Invalid generated-since value';

// ------------------------------------------------------------------ vmoves
export const vmoveNotFound = (id: string) => `No vm move with id ${id}.`;
export const notificationWithoutVMoves = (id: string) => `This notification ${id} without vm moves.`;

// ------------------------------------------------------------------ listing
export const markerNotFound = (marker: string) => `Marker ${marker} could not be found.`;
/**
 * oslo.db's InvalidSortKey, which Masakari hands to webob as an exception
 * object; its JSON encoder prints the exception's repr().
 */
export const invalidSortKey = (key: string) => `InvalidSortKey('Sort key supplied is invalid: ${key}')`;
export const invalidInput = (reason: string) => `Invalid input received: ${reason}`;
export const unknownSortDirection = () => invalidInput("Unknown sort direction, must be 'asc' or 'desc'");
export const sortDirectionSizeExceeds = () => invalidInput('Sort direction size exceeds sort key size');
/** masakari/utils.py validate_integer. */
export const notAnInteger = (name: string) => invalidInput(`${name} must be an integer`);
export const integerTooSmall = (name: string, min: number) => invalidInput(`${name} must be >= ${min}`);

// ------------------------------------------------------------------ request handling (wsgi.py)
export const malformedRequestBody = () => 'Malformed request body';
export const unsupportedContentType = () => 'Unsupported Content-Type';
export const methodNotAllowed = (method: string, action: string) =>
  `The request method: '${method}' with action: '${action}' is not allowed on this resource`;
export const invalidApiVersionString = (version: string) =>
  `API Version String ${version} is of invalid format. Must be of format MajorNum.MinorNum.`;
export const invalidGlobalApiVersion = (req: string, min: string, max: string) =>
  `Version ${req} is not supported by the API. Minimum is ${min} and maximum is ${max}.`;
export const projectIdMismatch = (urlProject: string, contextProject: string | null) =>
  `Malformed request URL: URL's project_id '${urlProject}' doesn't match Context's project_id '${contextProject ?? 'None'}'`;
export const policyNotAuthorized = (action: string) => `Policy doesn't allow ${action} to be performed.`;
export const unexpectedApiError = (kind: string) =>
  'Unexpected API Error. Please report this at https://bugs.launchpad.net/masakari/ and attach the ' +
  `Masakari API log if possible.\n<class '${kind}'>`;
/** webob's default explanation for a bare HTTPNotFound. */
export const resourceNotFound = () => 'The resource could not be found.';
/** oslo.middleware sizelimit: the placeholder is really sent unformatted. */
export const requestTooLarge = () => 'Request is too large. Larger than max_request_body_size (%s).';
/** keystonemiddleware auth_token. */
export const authenticationRequired = () => 'The request you have made requires authentication.';
export const identityUnavailable = () => 'The Keystone service is temporarily unavailable.';
/** This operator's bound on token validations in flight (docs/compatibility.md). */
export const identityBusy = () => 'Too many token validations are in progress; try again later.';
/** validation/parameter_types.py valid_name_regex reason, wrapped by exception.InvalidName. */
export const invalidName = () =>
  "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace.";
