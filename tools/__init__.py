"""Project tools (dataset builders, GPU checks, measurements); not part of the installed ``spcl``
package."""
