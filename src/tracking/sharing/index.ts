/** The visibility rule other tracking modules apply (their services take a scope; see scope.ts). */
export {
  DeviceAccess,
  EVERY_DEVICE,
  pointWindows,
  seesNewPoint,
  type AccessLevel,
  type Grant,
  type TrackingScope,
} from './scope.js';
/** A tracking route's scope, read from the permission its requireTracking declared. */
export { requestScopeOf, type RequestScope } from './request-scope.js';
