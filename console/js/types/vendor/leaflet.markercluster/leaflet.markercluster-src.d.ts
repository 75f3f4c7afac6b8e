// Leaflet.markercluster's script (node_modules/leaflet.markercluster/dist, served as vendor/leaflet.markercluster/):
// imported for its effect, it adds MarkerClusterGroup to the global L that map/leaflet-global.js sets up; what the
// console uses of it is typed in map/clusters.js.
export {};
