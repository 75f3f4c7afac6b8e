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
