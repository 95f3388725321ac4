"use strict";
// Placeholder: the console's script lands with the console itself.
