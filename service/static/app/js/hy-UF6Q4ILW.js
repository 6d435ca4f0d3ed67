import{a as e}from"./chunk-QERRJ4NY.js";var o={...e};export{o as hy};
