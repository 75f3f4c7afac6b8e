/**
 * The GraphQL schema (served as SDL at /v1/schema). Field names are camelCase; the resolvers return
 * the REST shapes (snake_case) and the default field resolver reads `fooBar` from `foo_bar`.
 * List fields take `page`/`limit` with the REST defaults and the same maximum of 100.
 */
export const typeDefs = /* GraphQL */ `
  "An ISO 8601 date-time in UTC."
  scalar DateTime
  "Any JSON value."
  scalar JSON

  type Query {
    "Who the credential is. Any credential."
    me: Me!
    "Devices, newest first. devices:read"
    devices(page: Int = 1, limit: Int = 10): DevicePage!
    "devices:read"
    device(id: ID!): Device!
    "Trips, newest first, optionally of one status. trips:read"
    trips(page: Int = 1, limit: Int = 20, status: TripStatus): TripPage!
    "trips:read"
    trip(id: ID!): Trip!
    """
    A trip's GPS points, oldest first (ties by id), as GET /v1/trips/{id}/gps: numbered pages or the page
    after a cursor (after: a page's next). total is the trip's own exact count. trips:read
    """
    tripPoints(tripId: ID!, page: Int, limit: Int = 10, after: String): GpsPointPage!
    """
    GPS points, newest first (ties by id, descending). Numbered pages (page, default 1) or the page after a
    cursor (after: a page's next), which costs the same however deep. gps:read
    """
    gpsPoints(page: Int, limit: Int = 10, after: String): GpsPointPage!
    "gps:read"
    gpsPoint(id: ID!): GpsPoint!
    "The newest point overall, or of one device; null when there is none. gps:read"
    latestPosition(deviceId: ID): GpsPoint
    "The newest point of every device that has one. gps:read"
    latestPositions: [GpsPoint!]!
    "Locations by name. locations:read"
    locations(page: Int = 1, limit: Int = 10): LocationPage!
    """
    Events (geofence enter, exit, dwell, ...) of the devices you may see, newest first (ties by id, descending), as
    GET /v1/events: filters deviceId, geofenceId, type, from and to (ISO 8601, inclusive); numbered pages or the
    page after a cursor (after: a page's next). events:read (every device) or events:read_own
    """
    events(
      page: Int
      limit: Int = 50
      after: String
      deviceId: ID
      geofenceId: ID
      type: String
      from: String
      to: String
    ): EventPage!
    "Your live sessions. A session token."
    mySessions: [Session!]!
    "API keys: your own (super admins: all). api_keys:read"
    apiKeys: [ApiKey!]!
    "Your streaming-platform integrations, never their tokens. A session; an API key or OAuth token needs integrations:read."
    myIntegrations: [Integration!]!
    "Your passkeys, oldest first (GET /v1/users/me/passkeys). A session token."
    myPasskeys: [Passkey!]!
  }

  type Mutation {
    "Finish a sign-in that needs a second factor: the temporary token and a TOTP or backup code give a session."
    verifyTwoFactorLogin(input: VerifyTwoFactorLoginInput!): TwoFactorLogin!
    "Ends the caller's session. A session token (API keys cannot log out)."
    logout: Boolean!
    "Revokes your OAuth tokens and signs your open apps out (forceLogout). A session or an app's token; an API key needs connected_apps:sign_out."
    logoutEverywhere(reason: String): Boolean!
    "Revokes your OAuth tokens of one client and signs it out (appLogout). A session or an app's token; an API key needs connected_apps:sign_out."
    logoutApp(clientId: ID!): Boolean!
    """
    Change your password (POST /v1/users/me/password): the current one is checked as a sign-in checks it; your other
    sessions end. A session token.
    """
    changePassword(input: ChangePasswordInput!): PasswordChange!
    """
    Delete your own account (POST /v1/users/me/delete): currentPassword when the account has one, else a sign-in of the
    last 15 minutes; then every session ends and the account is purged after the 7-day grace period. A session token.
    """
    deleteMyAccount(input: DeleteMyAccountInput): AccountDeletion!
    "Social sign-in: create or update the account of a provider identity. System key only."
    oauthSignin(input: OAuthSignInInput!): OAuthSignIn!
    "A single-use WebSocket ticket. A session or OAuth access token."
    mintWsTicket: WsTicket!
    "Changes a device, as PATCH /v1/devices/{id} (at least one field). devices:write"
    updateDevice(id: ID!, input: UpdateDeviceInput!): Device!
    "Deletes a GPS point (not one of a trip). gps:delete"
    deleteGpsData(id: ID!): Boolean!
    "Records an audit event. System key or audit:write; end-user actors need the X-ID-App-Assertion header."
    logAuditEvent(input: AuditEventInput!): AuditEvent!
    """
    Options for navigator.credentials.create (POST /v1/users/me/passkeys/options). A session token; one signed in more
    than 15 minutes ago gives currentPassword or signs in again (auth.reauthentication_required otherwise).
    """
    passkeyCreationOptions(currentPassword: String): JSON!
    "Registers a passkey from the browser's registration response (POST /v1/users/me/passkeys). A session token."
    registerPasskey(input: RegisterPasskeyInput!): Passkey!
    "Renames one of your passkeys (PATCH /v1/users/me/passkeys/{id}). A session token."
    renamePasskey(id: ID!, name: String!): Passkey!
    "Removes one of your passkeys; the last way into an account is kept (DELETE /v1/users/me/passkeys/{id}). A session token."
    deletePasskey(id: ID!): Boolean!
    "Options for navigator.credentials.get; without identifier any passkey of this site (POST /v1/auth/passkey/options). No credential."
    passkeySignInOptions(identifier: String): JSON!
    "Signs in with a passkey; answers as the login does (POST /v1/auth/passkey). No credential."
    signInWithPasskey(response: JSON!): SignIn!
    "After a sign-in that needs a second factor: options to answer with a passkey (POST /v1/auth/2fa/passkey/options)."
    twoFactorPasskeyOptions(tempToken: String!): JSON!
    "Finish a sign-in that needs a second factor with a passkey instead of a code (POST /v1/auth/2fa/passkey)."
    verifyTwoFactorLoginWithPasskey(tempToken: String!, response: JSON!): TwoFactorLogin!
  }

  type Passkey {
    id: ID!
    name: String!
    "singleDevice, or multiDevice for a synced passkey"
    deviceType: String!
    backedUp: Boolean!
    "Whether the authenticator verified the user (PIN, biometrics) when the passkey was registered"
    userVerified: Boolean!
    transports: [String!]!
    createdAt: DateTime!
    lastUsedAt: DateTime
  }

  input RegisterPasskeyInput {
    name: String
    "PublicKeyCredential.toJSON() of navigator.credentials.create"
    response: JSON!
  }

  "A sign-in's answer: a session, or (requires2fa) a temporary token for the second step."
  type SignIn {
    userId: ID!
    email: String!
    username: String!
    sessionToken: String
    sessionId: ID
    expiresAt: DateTime
    provider: String
    requires2fa: Boolean!
    tempToken: String
    preferredLocale: String!
  }

  type Me {
    userId: ID
    apiKeyId: ID
    roles: [String!]!
    permissions: [String!]!
    isSuperAdmin: Boolean!
  }

  enum TripStatus {
    draft
    active
    paused
    completed
  }

  type Device {
    id: ID!
    name: String!
    description: String
    deviceType: String
    isActive: Boolean!
    "Live positions go to anyone on the WebSocket vessels channel, signed in or not."
    isPublic: Boolean!
    "Its colour on the map, #rrggbb; null: the console picks one."
    color: String
    "Its marker on the map: car, van, boat, person, bike or generic."
    icon: String!
    apiKeyId: ID
    createdAt: DateTime!
    updatedAt: DateTime!
    "The newest point of the device (from the latest-point cache)."
    latestPosition: GpsPoint
  }

  type Trip {
    id: ID!
    name: String!
    description: String
    status: TripStatus!
    gpsLoggingEnabled: Boolean!
    deviceId: ID
    device: Device
    categoryId: ID
    originId: ID
    destinationId: ID
    weightKg: Float
    notes: String
    tags: [String!]!
    startLatitude: Float
    startLongitude: Float
    endLatitude: Float
    endLongitude: Float
    startedAt: DateTime
    endedAt: DateTime
    createdAt: DateTime!
    updatedAt: DateTime!
    "The first points of the trip by time (at most 100; tripPoints pages through all)."
    points(limit: Int = 10): [GpsPoint!]!
  }

  type GpsPoint {
    id: ID!
    deviceId: ID
    tripId: ID
    latitude: Float!
    longitude: Float!
    altitude: Float
    heading: Float
    timestamp: DateTime!
    "The four speeds are null when the device did not know its speed."
    speedKmh: Float
    speedMps: Float
    speedMph: Float
    speedKnots: Float
    pdop: Float
    hdop: Float
    vdop: Float
    "Horizontal accuracy in metres, as the device reported it."
    accuracy: Float
    "Battery charge in percent (0 to 100)."
    batteryLevel: Float
    charging: Boolean
    "The activity the phone reported (walking, driving, still…); several joined by commas."
    motion: String
    "An alarm raised with the point, e.g. sos."
    alarm: String
    createdAt: DateTime!
  }

  type Location {
    id: ID!
    name: String!
    street: String
    zip: String
    city: String
    country: String
    latitude: Float
    longitude: Float
    notes: String
    isActive: Boolean!
    createdAt: DateTime!
    updatedAt: DateTime!
  }

  type Pagination {
    page: Int!
    limit: Int!
    total: Int!
    totalPages: Int!
  }

  type DevicePage {
    data: [Device!]!
    pagination: Pagination!
  }

  type TripPage {
    data: [Trip!]!
    pagination: Pagination!
  }

  type GpsPointPage {
    data: [GpsPoint!]!
    "gpsPoints: total is exact up to 10,000 points, beyond that PostgreSQL's estimate (totalEstimated). tripPoints: exact."
    pagination: Pagination!
    totalEstimated: Boolean!
    "The cursor of the next page (pass it as after); null on the last page."
    next: String
  }

  "Something that happened to a device (docs/events.md), as GET /v1/events/{id} shows it."
  type Event {
    id: ID!
    "geofence_enter, geofence_exit, geofence_dwell, device_offline, device_online, overspeed, low_battery or sos"
    type: String!
    deviceId: ID!
    geofenceId: ID
    occurredAt: DateTime!
    "server: evaluated from the points; device: reported by the tracker app"
    source: String!
    latitude: Float
    longitude: Float
    details: JSON!
    createdAt: DateTime!
  }

  type EventPage {
    data: [Event!]!
    "total is exact up to 10,000 events, beyond that PostgreSQL's estimate (totalEstimated)."
    pagination: Pagination!
    totalEstimated: Boolean!
    "The cursor of the next page (pass it as after); null on the last page."
    next: String
  }

  type LocationPage {
    data: [Location!]!
    pagination: Pagination!
  }

  type Session {
    id: ID!
    ipAddress: String!
    userAgent: String!
    browser: String!
    os: String!
    deviceType: String!
    provider: String!
    createdAt: DateTime!
    lastActivityAt: DateTime
    expiresAt: DateTime!
    isCurrent: Boolean!
  }

  type ApiKey {
    id: ID!
    name: String!
    prefix: String
    scopes: [String!]!
    isActive: Boolean!
    isSystem: Boolean!
    userId: ID
    expiresAt: DateTime
    lastUsedAt: DateTime
    createdAt: DateTime!
  }

  input ChangePasswordInput {
    currentPassword: String!
    newPassword: String!
    "Also remove every passkey and API key of yours (system keys stay)."
    revokePasskeysAndKeys: Boolean
  }

  type PasswordChange {
    message: String!
    otherSessionsEnded: Int!
  }

  input DeleteMyAccountInput {
    currentPassword: String
  }

  type AccountDeletion {
    message: String!
    scheduledDeletionAt: DateTime!
  }

  type Integration {
    id: ID!
    platformSlug: String!
    platformName: String!
    platformUserId: String!
    username: String!
    displayName: String!
    profileImageUrl: String
    scopes: [String!]!
    isActive: Boolean!
    "active, paused or disabled"
    botStatus: String!
    connectedAt: DateTime!
    lastRefreshedAt: DateTime
  }

  input VerifyTwoFactorLoginInput {
    tempToken: String!
    code: String!
  }

  type TwoFactorLogin {
    userId: ID!
    email: String!
    username: String!
    sessionToken: String!
    sessionId: ID!
    expiresAt: DateTime!
    provider: String!
    preferredLocale: String!
  }

  input UpdateDeviceInput {
    name: String
    description: String
    deviceType: String
    isActive: Boolean
    "Show live positions to anonymous subscribers of the vessels channel."
    isPublic: Boolean
    "A CSS hex colour, #rrggbb (kept in lower case); null: the console picks one."
    color: String
    "car, van, boat, person, bike or generic."
    icon: String
    "Link this API key to the device: a key you own, or a system key."
    apiKeyId: ID
  }

  input OAuthSignInInput {
    email: String
    name: String!
    oauthProvider: String!
    oauthProviderId: String!
    image: String
  }

  type OAuthSignInUser {
    id: ID!
    username: String!
    email: String
    avatarUrl: String
    platform: String
    preferredLocale: String
  }

  type OAuthSignIn {
    user: OAuthSignInUser!
    message: String!
  }

  type WsTicket {
    ticket: String!
    expiresIn: Int!
  }

  input AuditEventInput {
    eventType: String!
    userId: ID
    actorId: ID
    resourceType: String
    resourceId: String
    sourceService: String
    metadata: JSON
  }

  type AuditEvent {
    id: ID!
    eventType: String!
    userId: ID
    actorId: ID
    resourceType: String
    resourceId: String
    sourceService: String
    ipAddress: String
    userAgent: String
    metadata: JSON
    createdAt: DateTime!
  }
`;
