// How each Electron app here runs: `main` once Electron is ready, then exit 0, or print the
// error and exit 1, so a CI job (or a person at a shell) reads the outcome from the status.
'use strict';

/** Runs `main` when `app` is ready and quits with its outcome. */
function runThenExit(app, main) {
  app
    .whenReady()
    .then(main)
    .then(
      () => app.exit(0),
      (error) => {
        console.error(error);
        app.exit(1);
      },
    );
}

module.exports = { runThenExit };
