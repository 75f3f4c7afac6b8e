/** The geometry other tracking modules evaluate geofences with (the events module; see geometry.ts). */
export { boundsOf, distanceM, shapeOf, signedDistanceM, type PolygonGeometry, type Shape } from './geometry.js';
