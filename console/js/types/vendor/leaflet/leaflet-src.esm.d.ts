// What `import * as L from '../vendor/leaflet/leaflet-src.esm.js'` gives the console (Leaflet's ES module, served from
// node_modules/leaflet/dist): the types of @types/leaflet. console/tsconfig.json's rootDirs put this folder's
// `vendor/` where the browser finds the served one.
export * from 'leaflet';
