# Runs `gpuscope help` for the man pages (MAN_DIR, emptied first so a removed command leaves no
# page) and the bash and zsh completions (BASH, ZSH), then touches STAMP.
# cmake -DGPUSCOPE=... -DMAN_DIR=... -DBASH=... -DZSH=... -DSTAMP=... -P GenerateDocs.cmake
file(REMOVE_RECURSE "${MAN_DIR}")
execute_process(COMMAND "${GPUSCOPE}" help --man "${MAN_DIR}" COMMAND_ERROR_IS_FATAL ANY)
foreach(shell bash zsh)
  string(TOUPPER "${shell}" variable)
  get_filename_component(folder "${${variable}}" DIRECTORY)
  file(MAKE_DIRECTORY "${folder}")
  execute_process(COMMAND "${GPUSCOPE}" help --completion ${shell} OUTPUT_FILE "${${variable}}"
                  COMMAND_ERROR_IS_FATAL ANY)
endforeach()
file(TOUCH "${STAMP}")
