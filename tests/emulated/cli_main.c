/* The command over the GPU stand-in: the command's sources are compiled once,
 * with main() renamed (tests/CMakeLists.txt), for this and the demux replay. */
int seqmatch_cli_main(int argc, char **argv);

int main(int argc, char **argv) { return seqmatch_cli_main(argc, argv); }
