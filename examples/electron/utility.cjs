// The Electron utilityProcess: a round trip in its own store, answered to the main process.
'use strict';
const { roundTrip } = require('./round-trip.cjs');

const dir = process.argv[2];
roundTrip(dir, 'utility').then(
  (result) => process.parentPort.postMessage({ ok: true, result }),
  (error) => process.parentPort.postMessage({ ok: false, error: String(error?.stack ? error.stack : error) }),
);
