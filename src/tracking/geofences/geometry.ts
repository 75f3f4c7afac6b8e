/**
 * The geometry of geofences (docs/geofences.md): a circle (centre and radius) or a GeoJSON Polygon with holes.
 * Distances are metres on a sphere of the mean Earth radius; a polygon is measured in a plane tangent at the
 * point asked about (equirectangular), which is exact enough for geofences of city size and below. Polygons
 * crossing the antimeridian are not supported (their positions are taken as given).
 */

/** A GeoJSON Polygon geometry: rings of [longitude, latitude] positions, the first the outer ring, then holes. */
export interface PolygonGeometry {
  type: 'Polygon';
  coordinates: number[][][];
}

/** Positions in all rings of one polygon, the closing ones included. */
export const MAX_POLYGON_POSITIONS = 1000;
export const MAX_POLYGON_RINGS = 100;

const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;
const M_PER_DEGREE = EARTH_RADIUS_M * RAD;

/** Great-circle distance in metres (haversine). */
export function distanceM(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * What is wrong with a polygon, naming the field (`polygon.coordinates.0.3`), or undefined when it is valid:
 * every ring closed (last position equals the first) with at least 4 positions, longitudes within ±180 and
 * latitudes within ±90, at most MAX_POLYGON_POSITIONS positions in all. Self-intersection is not checked.
 */
export function polygonProblem(polygon: PolygonGeometry, field = 'polygon'): string | undefined {
  let positions = 0;
  for (let r = 0; r < polygon.coordinates.length; r++) {
    const ring = polygon.coordinates[r]!;
    positions += ring.length;
    if (positions > MAX_POLYGON_POSITIONS)
      return `Body field '${field}.coordinates' must have at most ${MAX_POLYGON_POSITIONS} positions in all`;
    for (let p = 0; p < ring.length; p++) {
      const [lon, lat] = ring[p] as [number, number];
      if (!(lon >= -180 && lon <= 180))
        return `Body field '${field}.coordinates.${r}.${p}' must have a longitude between -180 and 180`;
      if (!(lat >= -90 && lat <= 90))
        return `Body field '${field}.coordinates.${r}.${p}' must have a latitude between -90 and 90`;
    }
    const first = ring[0]!;
    const last = ring[ring.length - 1]!;
    if (first[0] !== last[0] || first[1] !== last[1])
      return `Body field '${field}.coordinates.${r}' must be closed (its last position equal to its first)`;
  }
  return undefined;
}

/**
 * The circle fields of a polygon geofence: the mean of its outer ring's positions (the closing one counted
 * once) and the distance from there to the farthest of them in kilometres (so the circle encloses the polygon).
 */
export function enclosingCircle(polygon: PolygonGeometry): { latitude: number; longitude: number; radius_km: number } {
  const outer = polygon.coordinates[0]!;
  const n = outer.length - 1;
  let lat = 0;
  let lon = 0;
  for (let i = 0; i < n; i++) {
    lon += outer[i]![0]!;
    lat += outer[i]![1]!;
  }
  lat /= n;
  lon /= n;
  let farthest = 0;
  for (let i = 0; i < n; i++) farthest = Math.max(farthest, distanceM(lat, lon, outer[i]![1]!, outer[i]![0]!));
  // A polygon of one repeated position still has a radius > 0 (the table's check): a metre.
  return { latitude: lat, longitude: lon, radius_km: Math.max(farthest, 1) / 1000 };
}

/** A geofence's shape as evaluated: flat arrays, made once per geofence when the index is built. */
export type Shape =
  | { kind: 'circle'; latitude: number; longitude: number; radiusM: number }
  | {
      kind: 'polygon';
      /** Per ring, its positions as [lon0, lat0, lon1, lat1, ...] (closed). */
      rings: Float64Array[];
    };

export function shapeOf(fence: {
  latitude: number;
  longitude: number;
  radius_km: number;
  polygon: PolygonGeometry | null;
}): Shape {
  if (!fence.polygon)
    return { kind: 'circle', latitude: fence.latitude, longitude: fence.longitude, radiusM: fence.radius_km * 1000 };
  return {
    kind: 'polygon',
    rings: fence.polygon.coordinates.map((ring) => Float64Array.from(ring.flatMap((p) => [p[0]!, p[1]!]))),
  };
}

/** [minLon, minLat, maxLon, maxLat] of a shape. */
export function boundsOf(shape: Shape): [number, number, number, number] {
  if (shape.kind === 'circle') {
    const dLat = shape.radiusM / M_PER_DEGREE;
    const cos = Math.cos(shape.latitude * RAD);
    const dLon = cos > 1e-9 ? Math.min(180, dLat / cos) : 180;
    return [
      Math.max(-180, shape.longitude - dLon),
      Math.max(-90, shape.latitude - dLat),
      Math.min(180, shape.longitude + dLon),
      Math.min(90, shape.latitude + dLat),
    ];
  }
  const outer = shape.rings[0]!;
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < outer.length; i += 2) {
    minX = Math.min(minX, outer[i]!);
    maxX = Math.max(maxX, outer[i]!);
    minY = Math.min(minY, outer[i + 1]!);
    maxY = Math.max(maxY, outer[i + 1]!);
  }
  return [minX, minY, maxX, maxY];
}

/**
 * How far the point lies from the shape's border in metres: negative inside (by that much), positive outside.
 * A polygon's inside is inside its outer ring and outside every hole (even-odd over all rings).
 */
export function signedDistanceM(shape: Shape, latitude: number, longitude: number): number {
  if (shape.kind === 'circle') return distanceM(latitude, longitude, shape.latitude, shape.longitude) - shape.radiusM;
  // Plane tangent at the point: x east, y north, in metres; the point is the origin.
  const kx = M_PER_DEGREE * Math.cos(latitude * RAD);
  const ky = M_PER_DEGREE;
  let inside = false;
  let nearest = Infinity;
  for (const ring of shape.rings) {
    let x1 = (ring[0]! - longitude) * kx;
    let y1 = (ring[1]! - latitude) * ky;
    for (let i = 2; i < ring.length; i += 2) {
      const x2 = (ring[i]! - longitude) * kx;
      const y2 = (ring[i + 1]! - latitude) * ky;
      // Crossing of the ray from the origin towards +x.
      if (y1 > 0 !== y2 > 0 && x1 + ((0 - y1) * (x2 - x1)) / (y2 - y1) > 0) inside = !inside;
      // Squared distance from the origin to the segment.
      const dx = x2 - x1;
      const dy = y2 - y1;
      const length2 = dx * dx + dy * dy;
      const t = length2 > 0 ? Math.max(0, Math.min(1, -(x1 * dx + y1 * dy) / length2)) : 0;
      const px = x1 + t * dx;
      const py = y1 + t * dy;
      nearest = Math.min(nearest, px * px + py * py);
      x1 = x2;
      y1 = y2;
    }
  }
  const distance = Math.sqrt(nearest);
  return inside ? -distance : distance;
}
